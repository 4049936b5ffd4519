-- concord_store_job answers 'finished' (instead of 'stored') when its store ended the run, so that the worker emits
-- the run.finished webhook event exactly once (only one store can end a run: the run's row is locked).
CREATE OR REPLACE FUNCTION concord_store_job(p_job bigint, p_run bigint, p_owner text, p_key text, p_error text,
                                  p_result text, p_responses text, p_verdicts text, p_next text,
                                  p_call_id bigint, p_call_reply text, p_call_status bigint, p_call_latency_ms bigint,
                                  p_call_prompt_tokens bigint, p_call_completion_tokens bigint)
RETURNS text
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  ok boolean;
  s text;
  sk text;
  v record;
  vj jsonb;
BEGIN
  IF p_call_id IS NOT NULL THEN
    BEGIN
      UPDATE provider_calls SET state = 'done', reply = p_call_reply::jsonb, status = p_call_status, latency_ms = p_call_latency_ms,
                                prompt_tokens = coalesce(p_call_prompt_tokens, prompt_tokens), completion_tokens = p_call_completion_tokens,
                                error = NULL
      WHERE provider_calls.id = p_call_id;
    EXCEPTION WHEN OTHERS THEN
      -- A reply PostgreSQL cannot hold (NUL in its text): the call is completed without it, with the reason.
      UPDATE provider_calls SET state = 'done', reply = NULL, status = p_call_status, latency_ms = p_call_latency_ms,
                                prompt_tokens = coalesce(p_call_prompt_tokens, prompt_tokens), completion_tokens = p_call_completion_tokens,
                                error = left('the reply could not be stored: ' || SQLERRM, 2000)
      WHERE provider_calls.id = p_call_id;
    END;
  END IF;
  BEGIN
    IF p_error IS NULL THEN
      BEGIN
        UPDATE jobs SET status = 'done', result = p_result::jsonb, error = NULL, lease_owner = NULL, lease_expires_at = NULL,
                        finished_at = floor(extract(epoch from now()))::bigint
        WHERE jobs.id = p_job AND jobs.status = 'leased' AND jobs.lease_owner = p_owner;
        ok := FOUND;
        IF ok THEN
          -- An existing response (same item and source key) is kept.
          INSERT INTO responses (item_id, model, turn, text, origin, run_id, source_key, metadata)
          SELECT (x->>'itemId')::bigint, x->>'model', coalesce((x->>'turn')::bigint, 1), x->>'text', 'run', p_run,
                 x->>'sourceKey', coalesce(x->'metadata', '{}'::jsonb)
          FROM jsonb_array_elements(p_responses::jsonb) WITH ORDINALITY AS e(x, ord) ORDER BY ord
          ON CONFLICT DO NOTHING;
          INSERT INTO jobs (run_id, key, payload)
          SELECT p_run, x->>'key', x->'payload' FROM jsonb_array_elements(p_next::jsonb) WITH ORDINALITY AS e(x, ord) ORDER BY ord
          ON CONFLICT DO NOTHING;
          -- Verdicts last: their trigger bumps the project's freshness counter, whose row stays locked to commit.
          vj := p_verdicts::jsonb;
          IF jsonb_array_length(vj) > 0 THEN
            SELECT x->>'responseSourceKey' INTO sk FROM jsonb_array_elements(vj) AS e(x)
            LEFT JOIN responses r ON r.item_id = (x->>'itemId')::bigint AND r.source_key = x->>'responseSourceKey'
            WHERE r.id IS NULL LIMIT 1;
            IF FOUND THEN
              RAISE EXCEPTION 'job %: verdict for unknown response %', p_key, sk;
            END IF;
            -- A verdict on a checklist item is kept once by the unique (judge, response, item) index.
            INSERT INTO verdicts (judge_id, response_id, checklist_item_id, value, score, raw_output, parse_status, run_id)
            SELECT (x->>'judgeId')::bigint, r.id, (x->>'checklistItemId')::bigint, x->>'value', (x->>'score')::double precision,
                   x->>'rawOutput', coalesce(x->>'parseStatus', 'ok'), p_run
            FROM jsonb_array_elements(vj) WITH ORDINALITY AS e(x, ord)
            JOIN responses r ON r.item_id = (x->>'itemId')::bigint AND r.source_key = x->>'responseSourceKey'
            WHERE x->>'checklistItemId' IS NOT NULL ORDER BY ord
            ON CONFLICT DO NOTHING;
            -- One on the whole response (no item) by NOT EXISTS, since the index lets NULLs repeat; the advisory
            -- lock on (judge, response) keeps two transactions from both passing the NOT EXISTS before either commits.
            FOR v IN SELECT (x->>'judgeId')::bigint AS judge_id, r.id AS response_id, x->>'value' AS value,
                            (x->>'score')::double precision AS score, x->>'rawOutput' AS raw_output,
                            coalesce(x->>'parseStatus', 'ok') AS parse_status
                     FROM jsonb_array_elements(vj) WITH ORDINALITY AS e(x, ord)
                     JOIN responses r ON r.item_id = (x->>'itemId')::bigint AND r.source_key = x->>'responseSourceKey'
                     WHERE x->>'checklistItemId' IS NULL ORDER BY ord LOOP
              PERFORM pg_advisory_xact_lock(hashtextextended('verdict:' || v.judge_id || ':' || v.response_id, 0));
              INSERT INTO verdicts (judge_id, response_id, checklist_item_id, value, score, raw_output, parse_status, run_id)
              SELECT v.judge_id, v.response_id, NULL, v.value, v.score, v.raw_output, v.parse_status, p_run
              WHERE NOT EXISTS (SELECT 1 FROM verdicts WHERE verdicts.judge_id = v.judge_id AND verdicts.response_id = v.response_id
                                AND verdicts.checklist_item_id IS NULL);
            END LOOP;
          END IF;
        END IF;
      EXCEPTION WHEN OTHERS THEN
        -- The outcome's writes are undone; the job fails alone, with the database's reason.
        UPDATE jobs SET status = 'failed', error = left('storing the outcome failed: ' || SQLERRM, 2000), lease_owner = NULL,
                        lease_expires_at = NULL, finished_at = floor(extract(epoch from now()))::bigint
        WHERE jobs.id = p_job AND jobs.status = 'leased' AND jobs.lease_owner = p_owner;
        ok := FOUND;
      END;
    ELSE
      UPDATE jobs SET status = 'failed', error = left(p_error, 2000), lease_owner = NULL, lease_expires_at = NULL,
                      finished_at = floor(extract(epoch from now()))::bigint
      WHERE jobs.id = p_job AND jobs.status = 'leased' AND jobs.lease_owner = p_owner;
      ok := FOUND;
    END IF;
    IF NOT ok THEN
      RETURN 'lost';
    END IF;
    -- The run's row, locked last: a cancel committed before is seen here, and of two stores of a run's last two
    -- jobs at the same moment, the second reads the drained check after the first committed.
    SELECT runs.status INTO s FROM runs WHERE runs.id = p_run FOR NO KEY UPDATE;
    IF s IS NULL OR s NOT IN ('queued', 'running') THEN
      RAISE EXCEPTION 'run % is not active', p_run USING ERRCODE = 'CR001';
    END IF;
    PERFORM 1 FROM jobs WHERE jobs.run_id = p_run AND jobs.status IN ('queued', 'leased') LIMIT 1;
    IF NOT FOUND THEN
      UPDATE runs SET status = CASE WHEN c.failed = 0 THEN 'completed' WHEN c.done = 0 THEN 'failed' ELSE 'completed-with-errors' END,
                      finished_at = floor(extract(epoch from now()))::bigint
      FROM (SELECT count(*) FILTER (WHERE jobs.status = 'done') AS done, count(*) FILTER (WHERE jobs.status = 'failed') AS failed
            FROM jobs WHERE jobs.run_id = p_run) c
      WHERE runs.id = p_run AND runs.status IN ('queued', 'running');
      -- This store ended the run: the caller emits the run.finished webhook event (app/webhooks/events.server.ts).
      IF FOUND THEN
        RETURN 'finished';
      END IF;
    END IF;
    RETURN 'stored';
  EXCEPTION WHEN SQLSTATE 'CR001' THEN
    -- Nothing is stored into a run that stopped: every write above is undone and the job goes back to the queue.
    UPDATE jobs SET status = 'queued', lease_owner = NULL, lease_expires_at = NULL, attempts = jobs.attempts - 1
    WHERE jobs.id = p_job AND jobs.status = 'leased' AND jobs.lease_owner = p_owner;
    RETURN 'stopped';
  END;
END $$;
