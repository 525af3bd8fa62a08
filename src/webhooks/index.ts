/** Outgoing webhook delivery: signing, URL policy and the client. See docs/webhooks.md. */
export { type Resolver, WebhookClient, type WebhookClientOptions, WebhookHeader } from './client.js';
export {
  encodeForm,
  type ParamRecord,
  type Params,
  SignatureHeader,
  safeEqual,
  switchboardSignature,
  twilioBodySignature,
  twilioSignature,
  twilioSigningString,
  verifySwitchboardSignature,
  verifyTwilioBodySignature,
  verifyTwilioSignature,
} from './signing.js';
export * from './types.js';
export {
  type AddressPolicy,
  blockedHostReason,
  blockedReason,
  type ConnectionSettings,
  parseWebhookUrl,
  RetryClass,
  type WebhookTarget,
} from './url-policy.js';
