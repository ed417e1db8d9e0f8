/// An aligned plain-text table for people: the CLI's default output.
struct Table {
    var header: [String]
    var rows: [[String]]
    /// Columns whose cells are right-aligned (numbers).
    var rightAligned: Set<Int> = []

    var rendered: String {
        let widths = header.indices.map { column in
            ([header[column]] + rows.map { column < $0.count ? $0[column] : "" }).map(\.count).max() ?? 0
        }
        func line(_ cells: [String]) -> String {
            header.indices.map { column in
                let cell = column < cells.count ? cells[column] : ""
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                return rightAligned.contains(column) ? padding + cell : cell + padding
            }.joined(separator: "  ").trimmingTrailingSpaces
        }
        let rule = widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")
        return ([line(header), rule] + rows.map(line)).joined(separator: "\n")
    }
}

extension String {
    var trimmingTrailingSpaces: String {
        var s = Substring(self)
        while s.last == " " { s.removeLast() }
        return String(s)
    }
}
