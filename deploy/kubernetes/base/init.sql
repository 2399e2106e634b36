-- Schema and seed data of the command side: the products on sale and the orders
-- written by POST /orders. Postgres runs this once, on the first start of an empty
-- data volume (/docker-entrypoint-initdb.d); it is idempotent, so running it again
-- against a database that has it changes nothing.
--
-- No publication is created here: each runtime creates the publication and the
-- replication slot it streams from.

BEGIN;

CREATE TABLE IF NOT EXISTS products (
    id   serial PRIMARY KEY,
    name text   NOT NULL UNIQUE
);

CREATE TABLE IF NOT EXISTS orders (
    id         bigserial   PRIMARY KEY,
    product_id int         NOT NULL REFERENCES products (id),
    count      int         NOT NULL CHECK (count > 0),
    created_at timestamptz NOT NULL DEFAULT now()
);

-- The rankings join and group orders by product.
CREATE INDEX IF NOT EXISTS orders_product_id_idx ON orders (product_id);

-- The Spice cookbook recipe's three products, spelled as the recipe spells them.
INSERT INTO products (name) VALUES
    ('the most beautiful flower'),
    ('the most delicious chocalate'),
    ('nintendo')
ON CONFLICT (name) DO NOTHING;

-- A first order of each product, so that every ranking has something to show
-- before the first POST /orders. Fixed ids make a second run a no-op.
INSERT INTO orders (id, product_id, count)
SELECT v.id, p.id, v.count
FROM (VALUES
    (1, 'the most beautiful flower', 10),
    (2, 'the most delicious chocalate', 20),
    (3, 'nintendo', 30)
) AS v (id, name, count)
JOIN products p ON p.name = v.name
ON CONFLICT (id) DO NOTHING;

-- The explicit ids above did not advance the sequence: move it past them.
SELECT setval(pg_get_serial_sequence('orders', 'id'),
              (SELECT coalesce(max(id), 0) + 1 FROM orders), false);

COMMIT;
