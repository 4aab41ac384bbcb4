"""The bus's edge: what EventBridge invokes, one module a function (``door.bus``), each with its
``handler``: ``six_hourly_pass`` (the schedule's), ``mission_intake`` (the agent missions'),
``search_compaction`` (the page search compactor's, on the pages signals) and
``export_verification`` (the export verifier's, on the verifications downloads ask for)."""
