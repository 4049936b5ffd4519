/** A sampling plan that cannot make units (an unknown plan); its message starts "sampling: ". */
export class SamplingError extends Error {
  constructor(message: string) {
    super(`sampling: ${message}`);
    this.name = "SamplingError";
  }
}
