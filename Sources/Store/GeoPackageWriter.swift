// Writing layers: the GeoPackage 1.3 core tables, feature and attribute tables, typed columns.
// Every write of a layer happens inside one transaction, so a failure leaves the file as it was.

import Geometry
import SQLite
import Support

extension GeoPackage {
    /// WKT of EPSG:4326 as the GeoPackage spec's own example row gives it.
    static let wgs84Definition = """
        GEOGCS["WGS 84",DATUM["WGS_1984",SPHEROID["WGS 84",6378137,298.257223563,AUTHORITY["EPSG","7030"]],AUTHORITY["EPSG","6326"]],PRIMEM["Greenwich",0,AUTHORITY["EPSG","8901"]],UNIT["degree",0.0174532925199433,AUTHORITY["EPSG","9122"]],AXIS["Latitude",NORTH],AXIS["Longitude",EAST],AUTHORITY["EPSG","4326"]]
        """

    func createSchema() throws {
        try database.execute("""
            PRAGMA application_id = \(GeoPackage.applicationID);
            PRAGMA user_version = \(GeoPackage.userVersion);
            PRAGMA journal_mode = WAL;
            BEGIN;
            CREATE TABLE gpkg_spatial_ref_sys (
              srs_name TEXT NOT NULL,
              srs_id INTEGER NOT NULL PRIMARY KEY,
              organization TEXT NOT NULL,
              organization_coordsys_id INTEGER NOT NULL,
              definition TEXT NOT NULL,
              description TEXT
            );
            CREATE TABLE gpkg_contents (
              table_name TEXT NOT NULL PRIMARY KEY,
              data_type TEXT NOT NULL,
              identifier TEXT UNIQUE,
              description TEXT DEFAULT '',
              last_change DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
              min_x DOUBLE, min_y DOUBLE, max_x DOUBLE, max_y DOUBLE,
              srs_id INTEGER,
              CONSTRAINT fk_gc_r_srs_id FOREIGN KEY (srs_id) REFERENCES gpkg_spatial_ref_sys(srs_id)
            );
            CREATE TABLE gpkg_geometry_columns (
              table_name TEXT NOT NULL,
              column_name TEXT NOT NULL,
              geometry_type_name TEXT NOT NULL,
              srs_id INTEGER NOT NULL,
              z TINYINT NOT NULL,
              m TINYINT NOT NULL,
              CONSTRAINT pk_geom_cols PRIMARY KEY (table_name, column_name),
              CONSTRAINT uk_gc_table_name UNIQUE (table_name),
              CONSTRAINT fk_gc_tn FOREIGN KEY (table_name) REFERENCES gpkg_contents(table_name),
              CONSTRAINT fk_gc_srs FOREIGN KEY (srs_id) REFERENCES gpkg_spatial_ref_sys (srs_id)
            );
            \(GeoPackage.catalogExtensionsDDL)
            INSERT INTO gpkg_spatial_ref_sys VALUES
              ('Undefined cartesian SRS', -1, 'NONE', -1, 'undefined', 'undefined cartesian coordinate reference system'),
              ('Undefined geographic SRS', 0, 'NONE', 0, 'undefined', 'undefined geographic coordinate reference system'),
              ('WGS 84 geodetic', 4326, 'EPSG', 4326, '\(GeoPackage.wgs84Definition)', 'longitude/latitude coordinates in decimal degrees on the WGS 84 spheroid');
            \(GeoPackage.schemaExtensionRows)
            COMMIT;
            """)
    }

    /// The tables beyond the core that Vltava writes to: the extensions register, the schema
    /// extension's two tables (JSON columns are declared in `gpkg_data_columns`) and our own
    /// time-series links. `IF NOT EXISTS`, so a GeoPackage written by GDAL or QGIS, which may
    /// lack any of them, gets them on its first import.
    static let catalogExtensionsDDL = """
        CREATE TABLE IF NOT EXISTS gpkg_extensions (
          table_name TEXT,
          column_name TEXT,
          extension_name TEXT NOT NULL,
          definition TEXT NOT NULL,
          scope TEXT NOT NULL,
          CONSTRAINT ge_tce UNIQUE (table_name, column_name, extension_name)
        );
        CREATE TABLE IF NOT EXISTS gpkg_data_columns (
          table_name TEXT NOT NULL,
          column_name TEXT NOT NULL,
          name TEXT,
          title TEXT,
          description TEXT,
          mime_type TEXT,
          constraint_name TEXT,
          CONSTRAINT pk_gdc PRIMARY KEY (table_name, column_name),
          CONSTRAINT gdc_tn UNIQUE (table_name, name)
        );
        CREATE TABLE IF NOT EXISTS gpkg_data_column_constraints (
          constraint_name TEXT NOT NULL,
          constraint_type TEXT NOT NULL,
          value TEXT,
          min NUMERIC,
          min_is_inclusive BOOLEAN,
          max NUMERIC,
          max_is_inclusive BOOLEAN,
          description TEXT,
          CONSTRAINT gdcc_ntv UNIQUE (constraint_name, constraint_type, value)
        );
        CREATE TABLE IF NOT EXISTS vltava_time_series (
          table_name TEXT NOT NULL PRIMARY KEY,
          key_layer TEXT NOT NULL,
          layer_key_column TEXT NOT NULL,
          key_column TEXT NOT NULL,
          start_column TEXT NOT NULL,
          end_column TEXT NOT NULL,
          units TEXT
        );
        """

    /// The schema extension covers exactly its two tables (GeoPackage 1.3 Req 141), each
    /// registered once (the UNIQUE constraint does not catch it: column_name is NULL).
    static let schemaExtensionRows = ["gpkg_data_columns", "gpkg_data_column_constraints"].map { table in """
        INSERT INTO gpkg_extensions SELECT '\(table)', NULL, 'gpkg_schema', 'http://www.geopackage.org/spec/#extension_schema', 'read-write'
          WHERE NOT EXISTS (SELECT 1 FROM gpkg_extensions WHERE table_name = '\(table)' AND extension_name = 'gpkg_schema');
        """ }.joined(separator: "\n")

    /// Registers a written table in the GeoPackage catalog: contents (with its extent), its
    /// geometry column, its JSON columns, and its time-series link.
    func register(_ name: String, kind: LayerInfo.Kind, geometryType: String?, columns: [ColumnInfo], box: BBox,
                  description: String, timeSeries: TimeSeriesLink?) throws {
        let hasBox = !box.isEmpty
        try database.prepare("""
            INSERT INTO gpkg_contents (table_name, data_type, identifier, description, min_x, min_y, max_x, max_y, srs_id)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """).run([
                .text(name), .text(kind.rawValue), .text(name), .text(description),
                hasBox ? .real(box.minLon) : .null, hasBox ? .real(box.minLat) : .null,
                hasBox ? .real(box.maxLon) : .null, hasBox ? .real(box.maxLat) : .null,
                kind == .features ? .integer(4326) : .null,
            ])
        if let geometryType {
            try database.prepare("INSERT INTO gpkg_geometry_columns VALUES (?, 'geom', ?, 4326, 0, 0)")
                .run([.text(name), .text(geometryType)])
        }
        let addDataColumn = try database.prepare("""
            INSERT INTO gpkg_data_columns (table_name, column_name, name, mime_type) VALUES (?, ?, ?, 'application/json')
            """)
        for column in columns where column.isJSON {
            try addDataColumn.run([.text(name), .text(column.name), .text(column.name)])
        }
        if let link = timeSeries {
            // Stores written before units were kept have no `units` column.
            if try !GeoPackage.hasColumn(database, table: "vltava_time_series", column: "units") {
                try database.execute("ALTER TABLE vltava_time_series ADD COLUMN units TEXT")
            }
            try database.prepare("""
                INSERT INTO vltava_time_series (table_name, key_layer, layer_key_column, key_column, start_column, end_column, units)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """).run([
                .text(name), .text(link.keyLayer), .text(link.layerKeyColumn),
                .text(link.keyColumn), .text(link.startColumn), .text(link.endColumn),
                link.units.isEmpty ? .null : .text(JSON.serialize(link.unitsJSON)),
            ])
        }
    }

    /// An empty layer with declared columns (a feature layer in EPSG:4326 with an empty R-tree
    /// and its triggers when `geometryType` is set, else an attribute table), in the open
    /// transaction. The caller has checked the names.
    func createLayer(_ name: String, geometryType: String?, columns: [ColumnInfo], description: String) throws {
        try database.execute(GeoPackage.catalogExtensionsDDL + GeoPackage.schemaExtensionRows)
        var definitions = ["fid INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL"]
        if let geometryType { definitions.append("geom \(geometryType)") }
        definitions += columns.map { "\(quoted($0.name)) \($0.type.rawValue)" }
        try database.execute("CREATE TABLE \(quoted(name)) (\(definitions.joined(separator: ", ")))")
        try register(name, kind: geometryType == nil ? .attributes : .features, geometryType: geometryType, columns: columns, box: .empty,
                     description: description, timeSeries: nil)
        if geometryType != nil {
            var none: [RTreeCell] = []
            try createSpatialIndex(table: name, column: "geom", fidColumn: "fid", cells: &none)
        }
    }

    /// Removes a layer, its spatial index and its catalog rows.
    func drop(_ name: String) throws {
        if let column = try geometryColumnName(of: name) {
            try database.execute("DROP TABLE IF EXISTS \(quoted(GeoPackage.rtreeName(name, column)))")
        }
        try database.execute("DROP TABLE IF EXISTS \(quoted(name))")
        // Tables GDAL and QGIS write too (gpkg_metadata_reference, gpkg_ogr_contents) lose the
        // layer's rows, or the file fails the validator.
        for table in ["gpkg_geometry_columns", "gpkg_data_columns", "gpkg_extensions", "gpkg_metadata_reference", "gpkg_ogr_contents", "gpkg_contents", "vltava_time_series"] {
            guard try database.hasTable(table) else { continue }
            try database.prepare("DELETE FROM \(table) WHERE table_name = ?").run([.text(name)])
        }
    }
}
