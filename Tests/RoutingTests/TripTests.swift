import Foundation
import Geometry
import Routing
import SpatialIndex
import TestSupport
import Testing

/// Trips against brute force: every order of the stops is tried (a depth-first enumeration
/// that drops only orders already longer than the best found), on the walking distances of
/// the zoo's paths, for every shape a trip can have.
@Suite struct TripTests {
    /// The zoo's largest component, with its hierarchy: the same tables the server uses.
    static let zoo: Result<(graph: Graph, hierarchy: ContractionHierarchy), any Error> = Result {
        let graph = try ZooNetwork.graph.get()
        return (graph, ContractionHierarchy(graph: graph))
    }

    /// The table between `count` random nodes of the largest component.
    static func randomMatrix(count: Int, using random: inout SplitMix) throws -> [[Double]] {
        let (graph, hierarchy) = try zoo.get()
        let router = try Router(graph: graph)
        router.hierarchy = hierarchy
        let largest = graph.lons.indices.filter { graph.component[$0] == 0 }
        let points = (0..<count).map { _ -> Point in
            let node = largest[Int.random(in: 0..<largest.count, using: &random)]
            return Point(lon: graph.lons[node], lat: graph.lats[node])
        }
        let table = try router.table(sources: points, sourceSnapMetres: points.map { _ in 50 }, destinations: points, destinationSnapMetres: points.map { _ in 50 })
        return table.metres.map { $0.map { $0 ?? .infinity } }
    }

    /// The best order by enumeration, for a shape.
    static func bruteForce(_ c: [[Double]], _ shape: TripShape) -> Double {
        let n = c.count
        var best = Double.infinity
        var used = [Bool](repeating: false, count: n)
        var order: [Int] = []
        func extend(_ cost: Double) {
            if cost >= best { return }
            if order.count == n {
                if shape.fixedLast && order.last != n - 1 && !shape.roundTrip { return }
                var total = cost
                if shape.roundTrip {
                    total += c[order[n - 1]][order[0]]
                    // Fixed at both ends: the way back is from the last stop to the first.
                    if shape.fixedFirst && shape.fixedLast && order[n - 1] != n - 1 { return }
                }
                best = min(best, total)
                return
            }
            for j in 0..<n where !used[j] {
                if order.isEmpty && shape.fixedFirst && j != 0 { continue }
                if !shape.roundTrip && shape.fixedLast && j == n - 1 && order.count != n - 1 { continue }
                used[j] = true
                let step = order.last.map { c[$0][j] } ?? 0
                order.append(j)
                extend(cost + step)
                order.removeLast()
                used[j] = false
            }
        }
        extend(0)
        return best
    }

    static let shapes = [
        TripShape(roundTrip: true), TripShape(roundTrip: true, fixedFirst: true), TripShape(roundTrip: true, fixedLast: true),
        TripShape(roundTrip: true, fixedFirst: true, fixedLast: true), TripShape(roundTrip: false, fixedFirst: true),
        TripShape(roundTrip: false, fixedLast: true), TripShape(roundTrip: false, fixedFirst: true, fixedLast: true), TripShape(roundTrip: false),
    ]

    /// 140 random sets of 3 to 9 zoo stops, each shape in turn: Held–Karp's cost is the
    /// enumeration's, its order visits every stop once, with the fixed ends where they belong,
    /// and costs what it says. (Up to 9 stops, 362,880 orders: sets of 10, 3.6 million orders
    /// each, took most of a minute of a debug build for the same Held–Karp code.)
    @Test func heldKarpEqualsEveryOrderTried() throws {
        var random = SplitMix(state: 200)
        var checked = 0
        for set in 0..<140 {
            let count = 3 + set % 7
            let c = try Self.randomMatrix(count: count, using: &random)
            let shape = Self.shapes[set % Self.shapes.count]
            let trip = try #require(TripSolver.solve(c, shape: shape))
            #expect(trip.exact)
            #expect(trip.order.sorted() == Array(0..<count))
            if shape.fixedFirst { #expect(trip.order.first == 0) }
            if shape.fixedLast { #expect(trip.order.last == count - 1) }
            #expect(abs(TripSolver.cost(of: trip.order, c, closed: shape.roundTrip) - trip.cost) < 1e-6)
            let best = Self.bruteForce(c, shape)
            #expect(abs(trip.cost - best) < 1e-6, "set \(set) (\(count) stops, \(shape)): \(trip.cost) m against \(best) m")
            checked += 1
        }
        #expect(checked == 140)
    }

    /// Where Held–Karp can still run (13 to 15 stops), the heuristic is within 5% of it; its
    /// lower bound is never above the optimum.
    @Test func theHeuristicIsWithinFivePercentOfTheOptimum() throws {
        var random = SplitMix(state: 15)
        var worst = 0.0, loosest = 0.0
        for set in 0..<12 {
            let count = 13 + set % 3
            let c = try Self.randomMatrix(count: count, using: &random)
            let shape = Self.shapes[set % Self.shapes.count]
            let exact = try #require(TripSolver.solve(c, shape: shape, exactLimit: 16))
            let heuristic = try #require(TripSolver.solve(c, shape: shape, exactLimit: 0))
            #expect(!heuristic.exact)
            #expect(heuristic.order.sorted() == Array(0..<count))
            #expect(heuristic.lowerBound <= exact.cost + 1e-6)
            worst = max(worst, heuristic.cost / exact.cost - 1)
            if shape.roundTrip && !(shape.fixedFirst && shape.fixedLast) { loosest = max(loosest, 1 - heuristic.lowerBound / exact.cost) }
        }
        print("trip heuristic, 13–15 stops: worst \(String(format: "%.2f", worst * 100))% above Held–Karp; round trips' lower bound at most \(String(format: "%.1f", loosest * 100))% below the optimum")
        #expect(loosest < 0.1)
        #expect(worst <= 0.05)
    }

    @Test func smallAndCutOffTrips() {
        #expect(TripSolver.solve([[0]], shape: TripShape())?.order == [0])
        #expect(TripSolver.solve([[0, 5], [7, 0]], shape: TripShape())?.cost == 12)
        #expect(TripSolver.solve([[0, 5], [7, 0]], shape: TripShape(roundTrip: false, fixedLast: true))?.order == [0, 1])
        #expect(TripSolver.solve([[0, 5], [7, 0]], shape: TripShape(roundTrip: false))?.order == [0, 1])
        // A stop nothing reaches: no trip.
        let inf = Double.infinity
        #expect(TripSolver.solve([[0, 1, inf], [1, 0, inf], [inf, inf, 0]], shape: TripShape()) == nil)
        #expect(TripSolver.solve([[0, 1], [1, 0, 3]], shape: TripShape()) == nil)
    }
}
