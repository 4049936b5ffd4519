/** The shape of an import preset: what it reads, what it becomes, and how it runs. */
import type { FileFormat } from "../source.server";
import type { ImportWriter } from "../writer.server";

export type FieldSpec = { name: string; aliases: string[]; required: boolean; help: string };

export type PresetContext = {
  file: string;
  fileName: string;
  format: FileFormat;
  mapping: Record<string, string>;
  sink: ImportWriter;
  onBytes?: (chunk: Buffer) => void;
  /** labels-wide: the annotator columns (`--annotators`, or the columns picked on the Import page). */
  annotators?: string[];
};

export type Preset = {
  name: string;
  summary: string;
  /** benchmark: creates a dataset version; attach: adds to existing items; labels: dataset + imported-labels task. */
  kind: "benchmark" | "attach" | "labels";
  formats: FileFormat[];
  fields?: FieldSpec[];
  weightsSumToOne?: boolean;
  /**
   * Re-importing a file whose content matches an existing version also adds
   * rows to that version (LLMBar judge results onto its pairs), so the import
   * is redone against it. Other presets only create the version: an identical
   * file needs no second pass.
   */
  attachesToExistingVersion?: boolean;
  datasetName(fileName: string): string;
  run(ctx: PresetContext): Promise<void>;
};
