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
