// What one imported file may hold, where the store or the import's cost sets a bound: a file
// past it is refused at once with an error naming the bound, never read on for minutes.

public enum ImportLimits {
    /// The columns of a CSV header (points, WKT or observations). A GeoPackage table holds at
    /// most 2,000 columns (SQLite's SQLITE_MAX_COLUMN as Debian builds it), the fid, geometry
    /// and the series' interval columns included: 1,000 leaves every file at the cap
    /// importable. A header of 10⁶ columns used to run for minutes before SQLite refused it.
    public static let maxCSVColumns = 1_000
}
