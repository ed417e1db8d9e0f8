// Douglas–Peucker simplification of a line, for overview lines (OSRM's `overview=simplified`):
// the fewest vertices that keep the line within a tolerance of the original.

import Foundation

public enum Simplify {
    /// The line with every vertex dropped that lies within `tolerance` degrees (in a plane
    /// scaled by the cosine of the latitude, so both axes are alike) of the simplified line;
    /// the ends are always kept.
    public static func douglasPeucker(_ line: LineString, tolerance: Double) -> LineString {
        let n = line.pointCount
        guard n > 2, tolerance > 0 else { return line }
        let flat = line.coordinates
        let k = cos(flat[1] * .pi / 180)
        var keep = [Bool](repeating: false, count: n)
        keep[0] = true
        keep[n - 1] = true
        // An explicit stack of spans: no recursion depth to worry about on long lines.
        var spans = [(0, n - 1)]
        while let (first, last) = spans.popLast() {
            guard last > first + 1 else { continue }
            let ax = flat[2 * first] * k, ay = flat[2 * first + 1], bx = flat[2 * last] * k, by = flat[2 * last + 1]
            var farthest = -1, distance = tolerance
            for i in (first + 1)..<last {
                let d = segmentDistance(flat[2 * i] * k, flat[2 * i + 1], ax, ay, bx, by)
                if d > distance { farthest = i; distance = d }
            }
            if farthest >= 0 {
                keep[farthest] = true
                spans.append((first, farthest))
                spans.append((farthest, last))
            }
        }
        var out: [Double] = []
        for i in 0..<n where keep[i] { out += [flat[2 * i], flat[2 * i + 1]] }
        return LineString(coordinates: out)
    }

    /// An overview of a route: simplified to about a pixel when the whole line fills a
    /// 1,024-pixel screen (a thousandth of its larger extent).
    public static func forOverview(_ line: LineString) -> LineString {
        let box = BBox.of(line.coordinates)
        guard !box.isEmpty else { return line }
        let k = cos((box.minLat + box.maxLat) / 2 * .pi / 180)
        return douglasPeucker(line, tolerance: max((box.maxLon - box.minLon) * k, box.maxLat - box.minLat) / 1024)
    }

    static func segmentDistance(_ px: Double, _ py: Double, _ ax: Double, _ ay: Double, _ bx: Double, _ by: Double) -> Double {
        let dx = bx - ax, dy = by - ay
        let length2 = dx * dx + dy * dy
        let t = length2 > 0 ? max(0, min(1, ((px - ax) * dx + (py - ay) * dy) / length2)) : 0
        let x = ax + t * dx - px, y = ay + t * dy - py
        return (x * x + y * y).squareRoot()
    }
}
