import Foundation

/// GDAL's own GeoPackage validator, `validate_gpkg.py` from python3-gdal (Debian installs it
/// as the module `osgeo_utils.samples.validate_gpkg`), run with the system's Python, which is
/// the one python3-gdal is built for.
public enum GeoPackageValidator {
    /// nil when the file passes; otherwise the validator's complaint.
    public static func problems(_ path: String) throws -> String? {
        let result = try Fixtures.run(URL(fileURLWithPath: "/usr/bin/python3"), ["-m", "osgeo_utils.samples.validate_gpkg", path], timeout: 120)
        return result.status == 0 ? nil : "validate_gpkg.py \(path): exit \(result.status): \(result.stdout)\(result.stderr)"
    }

    /// nil when every file passes; otherwise each complaint, by file. One run of Python for
    /// all of them (its start and GDAL's import cost more than the checks).
    public static func problems(_ paths: [String]) throws -> String? {
        guard !paths.isEmpty else { return nil }
        let script = """
            import sys
            from osgeo_utils.samples.validate_gpkg import check
            failed = 0
            for path in sys.argv[1:]:
                try:
                    check(path, abort_at_first_error=True, warning_msg=False)
                except Exception as error:
                    failed += 1
                    print("%s: %s" % (path, error))
            sys.exit(1 if failed else 0)
            """
        let result = try Fixtures.run(URL(fileURLWithPath: "/usr/bin/python3"), ["-c", script] + paths, timeout: 300)
        return result.status == 0 ? nil : "validate_gpkg.py on \(paths.count) stores: exit \(result.status): \(result.stdout)\(result.stderr)"
    }

    /// The answer of one SQL statement through GDAL's SQLite dialect (`ogrinfo -dialect
    /// SQLite`), whose spatial functions (HasSpatialIndex…) are GDAL's: the text after " = "
    /// of each field line.
    public static func ogrSQL(_ sql: String, on path: String) throws -> [String] {
        let result = try Fixtures.run(URL(fileURLWithPath: "/usr/bin/ogrinfo"), ["-q", "-dialect", "SQLite", "-sql", sql, path], timeout: 120)
        return result.stdout.split(separator: "\n").compactMap { line in
            line.range(of: ") = ").map { String(line[$0.upperBound...]) }
        }
    }
}
