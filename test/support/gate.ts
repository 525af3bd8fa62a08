/** Keeps a fake store's reads pending until the test lets them go (to race them with changes). */
export class Gate {
  private pending: Promise<void> | null = null;

  /** Resolves when the gate opens; at once when it is open. */
  async pass(): Promise<void> {
    if (this.pending) await this.pending;
  }

  /** Closes the gate; the function returned opens it. */
  close(): () => void {
    let open = () => {};
    this.pending = new Promise<void>((r) => {
      open = () => {
        this.pending = null;
        r();
      };
    });
    return open;
  }
}
