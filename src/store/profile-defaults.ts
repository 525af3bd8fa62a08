/** The pre-provisioned default profile (spec §Profile): fixed sid, cannot be modified or deleted. */
export const DEFAULT_PROFILE_SID = 'PRae6e420f425248d6a26948c17a9e2acf';
