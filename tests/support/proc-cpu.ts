import fs from "node:fs";

/**
 * CPU seconds (user + system) a process has used so far, from /proc/PID/stat (Linux; clock ticks of
 * 1/100 s); with `reaped`, also the CPU of its children it has waited for. null elsewhere, or when the
 * process is gone.
 */
export function procCpuS(pid: number | undefined, opts: { reaped?: boolean } = {}): number | null {
  try {
    // Fields after the command's closing parenthesis: utime, stime, cutime and cstime are the 14th to 17th of the line.
    const f = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const x = f.slice(f.lastIndexOf(")") + 2).split(" ");
    return (Number(x[11]) + Number(x[12]) + (opts.reaped ? Number(x[13]) + Number(x[14]) : 0)) / 100;
  } catch {
    return null;
  }
}
