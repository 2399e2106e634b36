-- The corpus of SELECT texts the round-trip test runs through DuckDB:
-- json_serialize_sql, decode, encode, json_deserialize_sql. One statement per
-- entry, each ending with a semicolon at the end of a line.

-- The runtime's views and maintained shapes.
with a as (SELECT products.id, sum(count) as count FROM orders INNER JOIN products
ON orders.product_id = products.id GROUP BY products.id)
select name, count from products left join a on products.id = a.id
order by count desc nulls last, name limit 5;
SELECT product_id, count(*) AS n, sum(count) AS total, avg(count) AS mean, min(count) AS lo,
max(count) AS hi, count(price) AS priced, sum(price) AS revenue, min(price) AS cheapest FROM orders GROUP BY product_id;
SELECT sum(count) AS total, count(*) AS n, max(price) AS top, avg(price) AS mean FROM orders;
SELECT p.name, o.count % 3 AS bucket, sum(o.count * 2) AS twice, count(o.price) AS priced
FROM orders o JOIN products p ON o.product_id = p.id WHERE o.count > 2 GROUP BY p.name, o.count % 3;
SELECT p.name, s.total FROM products p LEFT JOIN
(SELECT product_id, sum(count) AS total FROM orders GROUP BY product_id) s ON s.product_id = p.id
ORDER BY s.total DESC NULLS LAST, p.name LIMIT 3;
SELECT product_id, sum(count) AS total FROM orders GROUP BY product_id HAVING sum(count) > 10;
SELECT id, count, price * 2 AS double, count::HUGEINT AS wide FROM orders WHERE count > 5;
SELECT o.id, p.name FROM orders o JOIN products p ON o.product_id = p.id;
SELECT sum(__a * __w), sum(CASE WHEN __a IS NULL THEN 0 ELSE __w END), sum(__w),
min(CASE WHEN __w > 0 THEN __a END), max(CASE WHEN __w > 0 THEN __a END),
sum(CASE WHEN __w < 0 THEN 1 ELSE 0 END), 1, __q._ivm_w;
SELECT * FROM (SELECT * EXCLUDE (_ivm_w) FROM _spice._ivm_c_orders WHERE _ivm_w < 0) AS o;
SELECT COUNT(*), AVG(count), MIN(id), MAX(o.id), COUNT(DISTINCT product_id) FROM orders o;
SELECT product_id, sum(count) AS count FROM orders GROUP BY 1;
WITH a AS (SELECT * FROM orders) SELECT * FROM a JOIN products USING (id);
SELECT string_agg(id || ':' || count, ',' ORDER BY id) FROM orders;
SELECT "id", "we""ird" FROM "Sales"."Customer";
SELECT * FROM orders WHERE (id > 0) AND "at" >= '2026-01-02 03:04:05+00';
SELECT string_agg(concat_ws('|', b, u, f, d, h, day, ts AT TIME ZONE 'UTC', ns, s, hex(bin)), ' ' ORDER BY u NULLS FIRST) FROM docs;
SELECT * FROM _spice.watermarks;
SELECT name, count FROM rankings WHERE count > 1 ORDER BY count DESC LIMIT 3;
SELECT o.* FROM orders o, range(10);
SELECT count(*) FROM memory.main.orders;

-- TPC-H-style queries.
SELECT l_returnflag, l_linestatus, sum(l_quantity) AS sum_qty, sum(l_extendedprice) AS sum_base_price,
sum(l_extendedprice * (1 - l_discount)) AS sum_disc_price, sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge,
avg(l_quantity) AS avg_qty, avg(l_extendedprice) AS avg_price, avg(l_discount) AS avg_disc, count(*) AS count_order
FROM lineitem WHERE l_shipdate <= CAST('1998-09-02' AS date) GROUP BY l_returnflag, l_linestatus ORDER BY l_returnflag, l_linestatus;
SELECT s_acctbal, s_name, n_name, p_partkey, p_mfgr FROM part, supplier, partsupp, nation, region
WHERE p_partkey = ps_partkey AND s_suppkey = ps_suppkey AND p_size = 15 AND p_type LIKE '%BRASS'
AND s_nationkey = n_nationkey AND n_regionkey = r_regionkey AND r_name = 'EUROPE'
AND ps_supplycost = (SELECT min(ps_supplycost) FROM partsupp, supplier, nation, region
WHERE p_partkey = ps_partkey AND s_suppkey = ps_suppkey AND s_nationkey = n_nationkey AND n_regionkey = r_regionkey AND r_name = 'EUROPE')
ORDER BY s_acctbal DESC, n_name, s_name, p_partkey LIMIT 100;
SELECT l_orderkey, sum(l_extendedprice * (1 - l_discount)) AS revenue, o_orderdate, o_shippriority
FROM customer, orders, lineitem WHERE c_mktsegment = 'BUILDING' AND c_custkey = o_custkey AND l_orderkey = o_orderkey
AND o_orderdate < DATE '1995-03-15' AND l_shipdate > DATE '1995-03-15'
GROUP BY l_orderkey, o_orderdate, o_shippriority ORDER BY revenue DESC, o_orderdate LIMIT 10;
SELECT o_orderpriority, count(*) AS order_count FROM orders WHERE o_orderdate >= DATE '1993-07-01'
AND o_orderdate < DATE '1993-07-01' + INTERVAL '3' MONTH
AND EXISTS (SELECT * FROM lineitem WHERE l_orderkey = o_orderkey AND l_commitdate < l_receiptdate)
GROUP BY o_orderpriority ORDER BY o_orderpriority;
SELECT sum(l_extendedprice * l_discount) AS revenue FROM lineitem WHERE l_shipdate >= DATE '1994-01-01'
AND l_shipdate < DATE '1994-01-01' + INTERVAL 1 YEAR AND l_discount BETWEEN 0.06 - 0.01 AND 0.06 + 0.01 AND l_quantity < 24;
SELECT supp_nation, cust_nation, l_year, sum(volume) AS revenue FROM (
SELECT n1.n_name AS supp_nation, n2.n_name AS cust_nation, extract(year FROM l_shipdate) AS l_year,
l_extendedprice * (1 - l_discount) AS volume FROM supplier, lineitem, orders, customer, nation n1, nation n2
WHERE s_suppkey = l_suppkey AND o_orderkey = l_orderkey AND c_custkey = o_custkey AND s_nationkey = n1.n_nationkey
AND c_nationkey = n2.n_nationkey AND ((n1.n_name = 'FRANCE' AND n2.n_name = 'GERMANY') OR (n1.n_name = 'GERMANY' AND n2.n_name = 'FRANCE'))
AND l_shipdate BETWEEN DATE '1995-01-01' AND DATE '1996-12-31') AS shipping
GROUP BY supp_nation, cust_nation, l_year ORDER BY supp_nation, cust_nation, l_year;
SELECT o_year, sum(CASE WHEN nation = 'BRAZIL' THEN volume ELSE 0 END) / sum(volume) AS mkt_share FROM (
SELECT extract(year FROM o_orderdate) AS o_year, l_extendedprice * (1 - l_discount) AS volume, n2.n_name AS nation
FROM part, supplier, lineitem, orders, customer, nation n1, nation n2, region
WHERE p_partkey = l_partkey AND s_suppkey = l_suppkey AND l_orderkey = o_orderkey AND o_custkey = c_custkey
AND c_nationkey = n1.n_nationkey AND n1.n_regionkey = r_regionkey AND r_name = 'AMERICA' AND s_nationkey = n2.n_nationkey
AND o_orderdate BETWEEN DATE '1995-01-01' AND DATE '1996-12-31' AND p_type = 'ECONOMY ANODIZED STEEL') AS all_nations
GROUP BY o_year ORDER BY o_year;
SELECT c_count, count(*) AS custdist FROM (SELECT c_custkey, count(o_orderkey) FROM customer
LEFT OUTER JOIN orders ON c_custkey = o_custkey AND o_comment NOT LIKE '%special%requests%' GROUP BY c_custkey) AS c_orders (c_custkey, c_count)
GROUP BY c_count ORDER BY custdist DESC, c_count DESC;
SELECT 100.00 * sum(CASE WHEN p_type LIKE 'PROMO%' THEN l_extendedprice * (1 - l_discount) ELSE 0 END) / sum(l_extendedprice * (1 - l_discount)) AS promo_revenue
FROM lineitem, part WHERE l_partkey = p_partkey AND l_shipdate >= DATE '1995-09-01' AND l_shipdate < CAST('1995-10-01' AS date);
WITH revenue AS (SELECT l_suppkey AS supplier_no, sum(l_extendedprice * (1 - l_discount)) AS total_revenue FROM lineitem GROUP BY l_suppkey)
SELECT s_suppkey, s_name, total_revenue FROM supplier, revenue WHERE s_suppkey = supplier_no
AND total_revenue = (SELECT max(total_revenue) FROM revenue) ORDER BY s_suppkey;
SELECT p_brand, p_type, p_size, count(DISTINCT ps_suppkey) AS supplier_cnt FROM partsupp, part
WHERE p_partkey = ps_partkey AND p_brand <> 'Brand#45' AND p_type NOT LIKE 'MEDIUM POLISHED%' AND p_size IN (49, 14, 23, 45, 19, 3, 36, 9)
AND ps_suppkey NOT IN (SELECT s_suppkey FROM supplier WHERE s_comment LIKE '%Customer%Complaints%')
GROUP BY p_brand, p_type, p_size ORDER BY supplier_cnt DESC, p_brand, p_type, p_size;
SELECT sum(l_extendedprice) / 7.0 AS avg_yearly FROM lineitem, part WHERE p_partkey = l_partkey AND p_brand = 'Brand#23'
AND p_container = 'MED BOX' AND l_quantity < (SELECT 0.2 * avg(l_quantity) FROM lineitem WHERE l_partkey = p_partkey);
SELECT c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice, sum(l_quantity) FROM customer, orders, lineitem
WHERE o_orderkey IN (SELECT l_orderkey FROM lineitem GROUP BY l_orderkey HAVING sum(l_quantity) > 300)
AND c_custkey = o_custkey AND o_orderkey = l_orderkey GROUP BY c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice
ORDER BY o_totalprice DESC, o_orderdate LIMIT 100;
SELECT cntrycode, count(*) AS numcust, sum(c_acctbal) AS totacctbal FROM (
SELECT substring(c_phone FROM 1 FOR 2) AS cntrycode, c_acctbal FROM customer
WHERE substring(c_phone FROM 1 FOR 2) IN ('13', '31', '23', '29', '30', '18', '17')
AND c_acctbal > (SELECT avg(c_acctbal) FROM customer WHERE c_acctbal > 0.00) AND NOT EXISTS (SELECT * FROM orders WHERE o_custkey = c_custkey)) AS custsale
GROUP BY cntrycode ORDER BY cntrycode;

-- Expression classes.
SELECT a = b, a <> b, a < b, a <= b, a > b, a >= b, a IS DISTINCT FROM b, a IS NOT DISTINCT FROM b FROM t;
SELECT a AND b OR c AND NOT d FROM t;
SELECT a IS NULL, a IS NOT NULL, a IN (1, 2, 3), a NOT IN (1, 2), -a, a + b * c - d / e, a // b, a % b, a ** 2, a ^ 2 FROM t;
SELECT a || b, a LIKE 'x%', a NOT LIKE 'y', a ILIKE 'z', a SIMILAR TO 'r.*', a GLOB '*.csv', a ~~ 'p', a !~~ 'q' FROM t;
SELECT CAST(a AS DECIMAL(10,2)), TRY_CAST(b AS INTEGER[]), c::STRUCT(x INT, y VARCHAR), d::MAP(VARCHAR, INT), e::my_enum, f::INTEGER[3] FROM t;
SELECT a::TINYINT, a::SMALLINT, a::BIGINT, a::HUGEINT, a::UTINYINT, a::USMALLINT, a::UINTEGER, a::UBIGINT, a::UHUGEINT, a::FLOAT, a::REAL FROM t;
SELECT a::VARCHAR, a::TEXT, a::BLOB, a::BOOLEAN, a::DATE, a::TIME, a::TIMESTAMP, a::TIMESTAMPTZ, a::TIMESTAMP_NS, a::TIMESTAMP_MS, a::TIMESTAMP_S, a::TIMETZ, a::INTERVAL, a::UUID, a::BIT, a::JSON, a::VARINT FROM t;
SELECT a::ENUM('x', 'y'), a::UNION(i INT, s VARCHAR), a::JSON, a::GEOMETRY, a::s.mytype, a::mytype(1, 'x'), a::VARIANT, a::MAP(INT, VARCHAR[])[] FROM t;
SELECT a::VARCHAR COLLATE nocase, a COLLATE de_de FROM t ORDER BY a COLLATE nocase;
SELECT CASE WHEN a > 1 THEN 'big' WHEN a > 0 THEN 'small' ELSE 'none' END, CASE a WHEN 1 THEN 'one' END FROM t;
SELECT a BETWEEN 1 AND 10, a NOT BETWEEN b AND c FROM t;
SELECT *, t.*, * EXCLUDE (a), * REPLACE (a + 1 AS a), COLUMNS('a.*'), COLUMNS(c -> c LIKE 'b%'), * RENAME (a AS z) FROM t;
SELECT COLUMNS(*) + 1, min(COLUMNS(* EXCLUDE (id))) FROM t;
SELECT * EXCLUDE (t.a) FROM t;
SELECT (SELECT max(b) FROM u), EXISTS (SELECT 1 FROM u), NOT EXISTS (SELECT 1 FROM u), a IN (SELECT b FROM u), a = ANY (SELECT b FROM u), a > ALL (SELECT b FROM u), ARRAY(SELECT b FROM u) FROM t;
SELECT x -> x + 1, list_transform(l, lambda y: y * 2), list_reduce(l, (acc, y) -> acc + y), list_filter(l, x -> x > 1) FROM t;
SELECT $1, $2 + 1;
SELECT ?, ?;
SELECT $name, $other = $name;
SELECT #1, #2 FROM t;
SELECT a.b.c, t.a['k'], l[1], l[1:2], l[:-1], s.field, (s).field FROM t;
SELECT struct_pack(a := 1, b := 2), {'a': 1, 'b': [1, 2]}, [1, 2, 3], MAP {'k': 1}, ['a', NULL], [[1], [2, 3]], ROW(1, 'x') FROM t;
SELECT a::INTEGER::VARCHAR::DOUBLE, CAST(CAST(a AS INTEGER) AS TEXT) FROM t;
SELECT coalesce(a, b, 0), nullif(a, 0), ifnull(a, 1), greatest(a, b), least(a, b), if(a > 1, 'x', 'y') FROM t;
SELECT main.abs(a), system.main.abs(b), lower(upper(c)), date_trunc('day', d), extract(epoch FROM d), date_part('year', d) FROM t;
SELECT a AS "Quoted Alias", b AS plain, c "implicit", d FROM t;
SELECT current_date, current_timestamp, now(), random(), gen_random_uuid(), uuid() FROM t;
SELECT a FROM t WHERE a = ANY ([1, 2]) AND b <> ALL ([3]) AND c = SOME (SELECT 1);
SELECT -(-a), +a, NOT NOT b, ~c, !d FROM t;
SELECT a @> b, a <@ b, a && b, a ->> '$.x', a -> '$.y', a ^@ 'pre' FROM t;
SELECT ts AT TIME ZONE 'UTC', ts + INTERVAL 1 HOUR, ts - INTERVAL '1' DAY, INTERVAL (a) MINUTE FROM t;
SELECT DEFAULT FROM t;
SELECT unnest([1, 2, 3]), unnest(s, recursive := true), generate_series(1, 3) FROM t;
SELECT a IS TRUE, a IS NOT FALSE, a IS UNKNOWN FROM t;
SELECT trim(BOTH 'x' FROM a), position('a' IN b), overlay(c PLACING 'z' FROM 2 FOR 1), substring(d, 1, 2) FROM t;
SELECT count(*) FILTER (WHERE a > 1), sum(a) FILTER (a > 2) FROM t;
SELECT list(a ORDER BY b DESC NULLS FIRST, c ASC NULLS LAST), first(a ORDER BY b), arg_max(a, b), quantile_cont(a, 0.5), quantile_cont(a, [0.25, 0.75]) FROM t;
SELECT mode() WITHIN GROUP (ORDER BY a), percentile_cont(0.5) WITHIN GROUP (ORDER BY b DESC) FROM t;
SELECT sum(DISTINCT a), count(DISTINCT (a, b)), string_agg(DISTINCT c, ',') FROM t;
SELECT count(a) FILTER (WHERE b) OVER (PARTITION BY c) FROM t;

-- Literals of every type.
SELECT 1, -1, 0, 2147483647, 2147483648, 9223372036854775807, 9223372036854775808, 170141183460469231731687303715884105727, 123456789012345678901234567890123456789012;
SELECT 1.5, -1.5, 0.1, 1e10, 1.5e-7, 123456789.123456789, 12345678901234567890.12345678901234567890, .5, 5., 1_000_000;
SELECT 'x', '', 'it''s', E'tab\there', 'unicode ☃ ü', $$dollar$$, $tag$tagged$tag$;
SELECT NULL, NULL::INTEGER, TRUE, FALSE, NULL IS NULL;
SELECT DATE '2020-01-01', TIME '12:34:56', TIMESTAMP '2020-01-01 12:34:56.789', TIMESTAMPTZ '2020-01-01 12:34:56+02', TIMESTAMP_NS '2020-01-01 00:00:00.123456789';
SELECT INTERVAL 1 DAY, INTERVAL '2 hours', INTERVAL '1 year 2 months 3 days 04:05:06.789', INTERVAL 3 MONTH, INTERVAL '-1' SECOND, INTERVAL 5 MICROSECONDS;
SELECT '\xAA\xBB'::BLOB, 'abc'::BLOB, BLOB '\x00';
SELECT 1.25::DECIMAL(4,2), 1::DECIMAL(18,0), 1::DECIMAL(38,10), 1::NUMERIC;
SELECT [1, 2], [], ['a', 'b'], [1.5, NULL], [[]]::INTEGER[][], [1, 2]::INTEGER[2];
SELECT {'a': 1, 'b': 'x'}, {'x': {'y': [1]}}, MAP {1: 'a', 2: 'b'}, MAP([1], ['x']);
SELECT 'a3b4c5d6-e7f8-4a1b-9c2d-3e4f5a6b7c8d'::UUID, '{"k": 1}'::JSON, '101'::BIT, 'x'::CHAR(3), 'y'::VARCHAR(10);
SELECT 'NaN'::DOUBLE, 'inf'::FLOAT, -0.0, 1e308, 4.9e-324;
SELECT x'ff', b'101';
SELECT 1e400, -1e400, 0e0, 1e21, 1e-7, 0.000001e0, 100e0, 4.9e-324;
SELECT 'Infinity', 'NaN', '-Infinity', 'line1
line2', 'back\slash "quoted"', '€ and 😀';

-- Joins of every kind.
SELECT * FROM a JOIN b ON a.id = b.id;
SELECT * FROM a INNER JOIN b USING (id, k);
SELECT * FROM a LEFT JOIN b ON a.id = b.id;
SELECT * FROM a LEFT OUTER JOIN b ON a.id = b.id RIGHT JOIN c ON c.id = a.id;
SELECT * FROM a FULL OUTER JOIN b ON a.id = b.id;
SELECT * FROM a CROSS JOIN b;
SELECT * FROM a, b, c WHERE a.id = b.id;
SELECT * FROM a NATURAL JOIN b;
SELECT * FROM a NATURAL LEFT JOIN b;
SELECT * FROM a SEMI JOIN b ON a.id = b.id;
SELECT * FROM a ANTI JOIN b ON a.id = b.id;
SELECT * FROM a ASOF JOIN b ON a.k = b.k AND a.ts >= b.ts;
SELECT * FROM a ASOF LEFT JOIN b USING (k, ts);
SELECT * FROM a POSITIONAL JOIN b;
SELECT * FROM a, LATERAL (SELECT * FROM b WHERE b.id = a.id) l;
SELECT * FROM a JOIN LATERAL unnest(a.l) AS u(x) ON true;
SELECT * FROM (a JOIN b ON a.id = b.id) JOIN (c LEFT JOIN d ON c.id = d.id) ON a.id = c.id;
SELECT * FROM a AS x (p, q) JOIN b AS y ON x.p = y.id;

-- Table references.
SELECT * FROM range(10);
SELECT * FROM range(10) WITH ORDINALITY AS t(i, n);
SELECT * FROM generate_series(1, 10, 2) AS g(v);
SELECT * FROM (VALUES (1, 'a'), (2, 'b')) AS v(id, name);
VALUES (1, 2), (3, 4);
SELECT * FROM (SELECT 1 AS x) sub;
SELECT * FROM t AT (VERSION => 3);
SELECT * FROM t AT (TIMESTAMP => TIMESTAMP '2020-01-01');
SELECT * FROM db.s.t AS alias;
SELECT * FROM 'data.csv';
SELECT * FROM read_parquet(['a.parquet', 'b.parquet'], hive_partitioning = true);
FROM t;
FROM t SELECT a, b;
SELECT * FROM t TABLESAMPLE 10%;
SELECT * FROM t USING SAMPLE 50 ROWS;
SELECT * FROM t USING SAMPLE reservoir(10%) REPEATABLE (42);
SELECT * FROM t USING SAMPLE 10% (bernoulli);
SELECT * FROM t USING SAMPLE system(5 PERCENT) REPEATABLE (7);
SELECT * FROM t TABLESAMPLE reservoir(20 ROWS);
SELECT * FROM (SHOW TABLES);
SELECT * FROM (SHOW ALL TABLES);
SELECT * FROM (SHOW t);
SELECT * FROM (DESCRIBE SELECT 1 AS x);
SELECT * FROM (DESCRIBE t);
SELECT * FROM (SUMMARIZE t);
SELECT * FROM t PIVOT (sum(v) FOR k IN ('a', 'b') GROUP BY g);
SELECT * FROM t PIVOT (sum(v) AS s, count(*) AS n FOR k IN ('a' AS x, 'b' AS y) j IN (1, 2));
SELECT * FROM t UNPIVOT (v FOR k IN (a, b, c));
SELECT * FROM t UNPIVOT INCLUDE NULLS (v FOR k IN (a AS 'A', b AS 'B'));
SELECT * FROM (UNPIVOT t ON COLUMNS(* EXCLUDE (id)) INTO NAME k VALUE v);

-- Set operations.
SELECT 1 UNION SELECT 2;
SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3;
SELECT a FROM t EXCEPT SELECT a FROM u;
SELECT a FROM t EXCEPT ALL SELECT a FROM u;
SELECT a FROM t INTERSECT SELECT a FROM u;
SELECT a FROM t INTERSECT ALL SELECT a FROM u;
SELECT a, b FROM t UNION BY NAME SELECT b, a FROM u;
SELECT a FROM t UNION ALL BY NAME SELECT a FROM u;
(SELECT 1 ORDER BY 1 LIMIT 1) UNION (SELECT 2) ORDER BY 1 DESC LIMIT 5 OFFSET 1;
SELECT 1 UNION SELECT 2 EXCEPT SELECT 3 INTERSECT SELECT 4;

-- Window functions.
SELECT row_number() OVER (PARTITION BY a ORDER BY b ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t;
SELECT sum(a) OVER (), rank() OVER (ORDER BY b DESC), dense_rank() OVER (ORDER BY b), percent_rank() OVER (ORDER BY b), cume_dist() OVER (ORDER BY b), ntile(4) OVER (ORDER BY b) FROM t;
SELECT lag(a) OVER w, lead(a, 2, 0) OVER w, first_value(a IGNORE NULLS) OVER w, last_value(a) OVER w, nth_value(a, 2) OVER w FROM t WINDOW w AS (PARTITION BY c ORDER BY d);
SELECT sum(a) OVER (ORDER BY b RANGE BETWEEN INTERVAL 1 DAY PRECEDING AND INTERVAL 1 DAY FOLLOWING) FROM t;
SELECT sum(a) OVER (ORDER BY b ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING EXCLUDE CURRENT ROW) FROM t;
SELECT avg(a) OVER (ORDER BY b GROUPS BETWEEN 2 PRECEDING AND 1 FOLLOWING EXCLUDE TIES) FROM t;
SELECT count(*) OVER (ORDER BY b ROWS 3 PRECEDING EXCLUDE GROUP), min(a) OVER (ORDER BY b RANGE CURRENT ROW EXCLUDE NO OTHERS) FROM t;
SELECT sum(DISTINCT a) OVER (PARTITION BY b), list(a ORDER BY c) OVER (PARTITION BY b) FROM t;
SELECT a, row_number() OVER (PARTITION BY b ORDER BY c) AS rn FROM t QUALIFY rn = 1;
SELECT a FROM t QUALIFY row_number() OVER (PARTITION BY b ORDER BY c DESC) <= 2;

-- Subqueries and CTEs.
SELECT * FROM t WHERE a IN (SELECT a FROM u WHERE u.b = t.b);
SELECT (SELECT count(*) FROM u WHERE u.id = t.id) AS n FROM t;
WITH x AS (SELECT 1 AS a), y AS (SELECT a + 1 AS b FROM x) SELECT * FROM x, y;
WITH x(a, b) AS (SELECT 1, 2) SELECT a FROM x;
WITH x AS MATERIALIZED (SELECT 1 AS a), y AS NOT MATERIALIZED (SELECT 2 AS b) SELECT * FROM x, y;
WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 10) SELECT * FROM r;
WITH RECURSIVE r(n) USING KEY (n) AS (SELECT 1 UNION SELECT n + 1 FROM r WHERE n < 10) SELECT * FROM r;
WITH RECURSIVE r AS (SELECT 1 AS n UNION SELECT n + 1 FROM r WHERE n < 3) SELECT sum(n) FROM r;
WITH a AS (WITH b AS (SELECT 1 AS x) SELECT x FROM b) SELECT * FROM a;
SELECT * FROM (WITH c AS (SELECT 2 AS y) SELECT y FROM c) s;
WITH u AS (SELECT 1 AS a UNION ALL SELECT 2) SELECT * FROM u ORDER BY a;

-- Grouping, modifiers, QUALIFY, SAMPLE.
SELECT a, b, sum(c) FROM t GROUP BY GROUPING SETS ((a, b), (a), ());
SELECT a, b, sum(c) FROM t GROUP BY CUBE (a, b);
SELECT a, b, sum(c), grouping(a, b) FROM t GROUP BY ROLLUP (a, b);
SELECT a, b, sum(c) FROM t GROUP BY a, ROLLUP (b);
SELECT a, sum(c) FROM t GROUP BY ALL;
SELECT a, sum(c) FROM t GROUP BY ALL ORDER BY ALL DESC;
SELECT a, b FROM t ORDER BY ALL;
SELECT DISTINCT a FROM t;
SELECT DISTINCT ON (a) a, b FROM t ORDER BY a, b DESC;
SELECT a FROM t LIMIT 10 OFFSET 5;
SELECT a FROM t OFFSET 5;
SELECT a FROM t LIMIT 10%;
SELECT a FROM t LIMIT 0.5 PERCENT OFFSET 2;
SELECT a FROM t LIMIT (SELECT 3);
SELECT a FROM t ORDER BY 1 DESC NULLS FIRST, a ASC NULLS LAST, b;
SELECT a, count(*) FROM t GROUP BY a HAVING count(*) > 1 ORDER BY 2 DESC LIMIT 5;
SELECT a FROM t USING SAMPLE 10;
SELECT a FROM t WHERE b > 1 USING SAMPLE 10 PERCENT (system, 3);
SELECT sum(a) FROM t HAVING sum(a) > 0;
SELECT a FROM t GROUP BY a, a + 1 ORDER BY a FETCH FIRST 3 ROWS ONLY;
