import { DomainError } from "~/errors";

/** A sampling plan that cannot make units (an unknown plan): the new-task form shows it for the form as a whole (400). */
export class SamplingError extends DomainError {}
