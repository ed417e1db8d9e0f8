-- A Vltava layer's table partitioned by grid cell, in place (Benchmarks/partition-layer.sh runs
-- it; Tests/PostGISTests/PartitionTests.swift too). `CALL vltava_partition_layer('parking', 50, 8)`:
-- the table `parking` becomes `PARTITION BY HASH (vltava_grid_key(geom, 50))` with 8 partitions,
-- the same rows, columns, indexes and triggers; the old table is kept as parking_unpartitioned.
--
-- The grid key is the cell of the geometry's bounding box's lower-left corner in a grid of
-- `millidegrees` thousandths of a degree. A CHECK keeps every box under 0.99 of a cell wide and
-- high (a wider row is refused, by an insert from Vltava or anyone), so a row that reaches a
-- region has its key among the region's cells and one to the left and below: the keys Vltava's
-- FIND statements name (PostGIS/PostGISFetch.swift, `gridCells`), which PostgreSQL prunes the
-- partitions by. Vltava finds the key with pg_get_partkeydef when it reads the catalogue.
--
-- Hash partitioning spreads neighbouring cells over the partitions, as a Citus distributed
-- table hashes its distribution column. Limits: fid is unique within a partition only (a unique
-- index on a partitioned table must hold its key), so an insert with an explicit id already used
-- in another cell is not refused; and one statement takes an ACCESS EXCLUSIVE lock on the layer
-- while it copies the rows.

CREATE OR REPLACE FUNCTION vltava_grid_key(g geometry, millidegrees integer) RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $f$
    SELECT (floor(ST_XMin(g) * 1000 / millidegrees)::bigint + 1000000) * 10000000
         + (floor(ST_YMin(g) * 1000 / millidegrees)::bigint + 1000000)
$f$;

CREATE OR REPLACE PROCEDURE vltava_partition_layer(layer text, millidegrees integer, partitions integer)
LANGUAGE plpgsql AS $p$
DECLARE
    widest double precision;
    old text := layer || '_unpartitioned';
    cell double precision := millidegrees / 1000.0;
BEGIN
    EXECUTE format('SELECT max(greatest(ST_XMax(geom) - ST_XMin(geom), ST_YMax(geom) - ST_YMin(geom))) FROM %I', layer) INTO widest;
    IF widest >= cell * 0.99 THEN
        RAISE EXCEPTION 'a feature of % is % degrees wide or high: the cell (% degrees) must be over % of it', layer, widest, cell, 1 / 0.99;
    END IF;
    EXECUTE format('ALTER TABLE %I RENAME TO %I', layer, old);
    EXECUTE format('DROP TRIGGER IF EXISTS vltava_changed ON %I', old);
    EXECUTE format('DROP TRIGGER IF EXISTS vltava_recorded ON %I', old);
    EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS, '
                   'CONSTRAINT %I CHECK (ST_XMax(geom) - ST_XMin(geom) < %s AND ST_YMax(geom) - ST_YMin(geom) < %s)) '
                   'PARTITION BY HASH (vltava_grid_key(geom, %s))',
                   layer, old, layer || '_within_a_cell', cell * 0.99, cell * 0.99, millidegrees);
    FOR r IN 0 .. partitions - 1 LOOP
        EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES WITH (MODULUS %s, REMAINDER %s)', layer || '_p' || r, layer, partitions, r);
    END LOOP;
    EXECUTE format('INSERT INTO %I SELECT * FROM %I', layer, old);
    -- fid unique within each partition (see above), and the two GiST indexes every layer has.
    FOR r IN 0 .. partitions - 1 LOOP
        EXECUTE format('CREATE UNIQUE INDEX ON %I (fid)', layer || '_p' || r);
    END LOOP;
    EXECUTE format('CREATE INDEX ON %I USING GIST (geom)', layer);
    EXECUTE format('CREATE INDEX ON %I USING GIST ((geom::geography))', layer);
    EXECUTE format('CREATE INDEX ON %I (fid)', layer);
    EXECUTE format('CREATE TRIGGER vltava_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON %I FOR EACH STATEMENT EXECUTE FUNCTION vltava_notify()', layer);
    EXECUTE format('CREATE TRIGGER vltava_recorded AFTER INSERT OR UPDATE OR DELETE ON %I FOR EACH ROW EXECUTE FUNCTION vltava_record()', layer);
    EXECUTE format('ANALYZE %I', layer);
    -- Servers on the database reload: they read the partition key with the catalogue.
    PERFORM pg_notify('vltava_changes', 'layers');
END
$p$;
