// LATEST, HISTORY and OBSERVED_AT on a PostGIS store: the snapshot holds no observations
// (Engine/SeriesFetch.swift), so the planner's accessors read an `AnswerSeries`, which the
// runner fills once the FIND has selected its rows: one statement per layer with a series, for
// the stations among the rows, whatever number of rows and fields read it. The values then come
// from the engine's own `TimeSeries`, as on a GeoPackage.

import Engine
import Geometry
import Support

/// One layer's series as one answer reads it.
final class AnswerSeries: Sendable {
    let layer: Layer
    let stored: TimeSeries
    private let state = Locked<(needs: SeriesNeeds, fetched: TimeSeries?, keys: [String]?)>((SeriesNeeds(), nil, nil))

    init(layer: Layer, stored: TimeSeries) {
        self.layer = layer
        self.stored = stored
    }

    /// What the planned fields need (planning only).
    func need(_ add: (inout SeriesNeeds) -> Void) { state.withLock { add(&$0.needs) } }

    var needs: SeriesNeeds { state.withLock { $0.needs } }

    /// The rows fetched for this run (the stored series, empty, before any fetch).
    var series: TimeSeries { state.withLock { $0.fetched } ?? stored }

    /// The stations of the last fetch, for EXPLAIN.
    var lastKeys: [String]? { state.withLock { $0.keys } }

    func fill(_ series: TimeSeries, keys: [String]) {
        state.withLock { $0.fetched = series; $0.keys = keys }
    }
}

/// The series of one planned FIND, by layer.
final class AnswerSeriesSet: Sendable {
    private let all = Locked<[AnswerSeries]>([])
    /// Held for a whole run: two runs of one plan at once take turns, so neither reads the
    /// other's rows.
    let running = Locked(())

    var isEmpty: Bool { all.withLock { $0.isEmpty } }
    var members: [AnswerSeries] { all.withLock { $0 } }

    func series(of layer: Layer, _ stored: TimeSeries) -> AnswerSeries {
        all.withLock { list in
            if let found = list.first(where: { $0.layer === layer }) { return found }
            let made = AnswerSeries(layer: layer, stored: stored)
            list.append(made)
            return made
        }
    }
}

extension Runner {
    /// Fetches, for the stations among `hits`, what the plan's fields read of their series.
    func fetchSeries(_ plan: FindPlan, _ hits: [Hit], at position: SourcePosition) throws(QueryError) {
        for answer in plan.series?.members ?? [] {
            guard plan.sources.contains(where: { $0.layer === answer.layer }) else {
                throw Runner.engineError(.notSupportedOnPostGIS("the time series of another layer than the FIND's"), at: position)
            }
            let key = answer.stored.link.layerKeyColumn
            let keys = hits.compactMap { hit -> String? in
                let layer = plan.sources[hit.source].layer
                return layer === answer.layer ? layer.properties[hit.index][key]?.stringValue : nil
            }
            do {
                let unique = Array(Set(keys)).sorted()
                answer.fill(try plan.snapshot.series(answer.stored, keys: unique, needs: answer.needs, deadline: deadline), keys: unique)
            } catch {
                throw Runner.engineError(error, at: position)
            }
        }
    }

    /// EXPLAIN's lines for the series fetched by the run just made: the statement and
    /// PostgreSQL's plan for it.
    func seriesPlan(_ plan: FindPlan, database: any DatabaseStore) throws(EngineError) -> [String] {
        var lines: [String] = []
        for answer in plan.series?.members ?? [] {
            guard let keys = answer.lastKeys, !keys.isEmpty else {
                lines.append("   series (\(answer.stored.table)): no station selected, nothing fetched")
                continue
            }
            let explained = try database.explainSeries(answer.stored, keys: keys, needs: answer.needs, deadline: deadline)
            lines.append("   series (\(answer.stored.table)), LATEST/HISTORY/OBSERVED_AT for the stations selected: \(explained.statement)")
            lines += explained.plan.map { "     " + $0 }
        }
        return lines
    }
}
