-- The ten most frequent event kinds.
SELECT kind, count(*) AS n FROM events GROUP BY kind ORDER BY n DESC LIMIT 10
