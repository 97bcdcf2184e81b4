/**
 * A gate a fake's answers wait at while a test holds it (a peer slower than a caller's deadline):
 * `hold()` closes it and returns what opens it again; `passed()` resolves at once while it is open.
 */
export class AnswerGate {
  private closed: Promise<void> | undefined;

  hold(): () => void {
    let open: () => void = () => undefined;
    this.closed = new Promise<void>((resolve) => {
      open = resolve;
    });
    return () => {
      this.closed = undefined;
      open();
    };
  }

  passed(): Promise<void> {
    return this.closed ?? Promise.resolve();
  }
}
