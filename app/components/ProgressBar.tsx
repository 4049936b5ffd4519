export function ProgressBar({ label, done, total, testId }: { label: string; done: number; total: number; testId?: string }) {
  const pct = total > 0 ? Math.round((100 * done) / total) : 0;
  return (
    <div className="progress" data-testid={testId}>
      <div className="progress-label">
        <span>{label}</span>
        <span className="muted">
          {done} / {total} ({pct}%)
        </span>
      </div>
      <div className="progress-track" role="progressbar" aria-label={label} aria-valuemin={0} aria-valuemax={total} aria-valuenow={done}>
        <div className="progress-fill" style={{ width: `${pct}%` }} />
      </div>
    </div>
  );
}
