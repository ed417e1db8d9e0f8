// One budget per request, honoured by every operation: each Engine operation family takes the
// request's `Deadline` and stops with `deadlineExceeded` once it has passed or its
// `Cancellation` is set (the server sets it when the client leaves). The filters here cancel
// the request from inside the work, so the deadline passes in the middle of an operation at a
// known step, not at a moment of the clock.

import Engine
import Foundation
import Geometry
import QueryLanguage
import Support
import Synchronization
import TestSupport
import Testing

@Suite(.validatesStores) struct DeadlineTests {
    /// A deadline with no time bound that passes when `cancellation` is set.
    static func untimed(_ cancellation: Cancellation) -> Deadline { .after(seconds: .infinity, cancellation: cancellation) }

    static func isDeadline(_ body: () throws(EngineError) -> Void) -> Bool {
        do {
            try body()
            return false
        } catch {
            if case .deadlineExceeded = error { return true }
            return false
        }
    }

    /// A feature reference's search (one per row) stops once the request is cancelled, and
    /// gives no partial answer: the nearest parking zone to a district, cancelled after the
    /// search has measured 3 candidates.
    @Test func aJoinSearchStopsInTheMiddle() throws {
        let snapshot = try QueryStore.get()
        let parking = try snapshot.layer("parking"), districts = try snapshot.layer("districts")
        let district = try #require(districts.geometries[0])
        let whole = try #require(try snapshot.nearestFeature(parking, to: district))
        #expect((whole.metres ?? -1) >= 0)
        let cancellation = Cancellation()
        let measured = Atomic<Int>(0)
        let stopped = DeadlineTests.isDeadline { () throws(EngineError) in
            _ = try snapshot.nearestFeature(parking, to: district, filter: { _ in
                if measured.add(1, ordering: .relaxed).newValue == 3 { cancellation.cancel() }
                return true
            }, deadline: DeadlineTests.untimed(cancellation))
        }
        #expect(stopped)
        #expect(DeadlineTests.isDeadline { () throws(EngineError) in
            _ = try snapshot.containingFeature(districts, of: .point(Point(lon: 14.42, lat: 50.08)), deadline: DeadlineTests.untimed(cancellation))
        })
        // NEAREST k TO the features of another layer: the same search.
        #expect(DeadlineTests.isDeadline { () throws(EngineError) in
            _ = try snapshot.nearest(parking, to: [district], k: 3, deadline: DeadlineTests.untimed(cancellation))
        })
    }

    /// A statement planned with a deadline runs its feature references within it; an answer
    /// made after it passed is refused, not returned with the references left out.
    @Test func aStatementWithJoinsOrGroupsIsRefusedPastItsDeadline() throws {
        let snapshot = try QueryStore.get()
        let cancellation = Cancellation()
        cancellation.cancel()
        for text in ["FIND parking RETURN fid, (districts CONTAINING).NAZEV_MC, (districts NEAREST).distance_m",
                     "FIND parking GROUP BY (districts CONTAINING).NAZEV_MC RETURN (districts CONTAINING).NAZEV_MC, COUNT(*)"] {
            var budget = RequestBudget(limits: snapshot.limits, cancellation: cancellation)
            do {
                _ = try Query.answer(text, on: snapshot, format: .json, budget: &budget)
                Issue.record("\(text) answered")
            } catch {
                #expect(error.code == "deadline_exceeded", "\(text)")
            }
        }
    }

    /// A page of items filters every feature: it stops when the request is cancelled while the
    /// filter runs.
    @Test func itemsStopInTheMiddle() throws {
        let snapshot = try QueryStore.get()
        let parking = try snapshot.layer("parking")
        #expect(parking.count > 1000)
        let cancellation = Cancellation()
        let request = ItemsRequest(filter: { index in
            if index == 10 { cancellation.cancel() }
            return true
        }, limit: 10)
        #expect(DeadlineTests.isDeadline { () throws(EngineError) in _ = try snapshot.items(parking, request, deadline: DeadlineTests.untimed(cancellation)) })
        let page = try snapshot.items(parking, ItemsRequest(limit: 10), deadline: DeadlineTests.untimed(Cancellation()))
        #expect(page.indices == Array(0..<10) && page.matched == parking.count)
    }

    /// Routes, tables, tiles and locate take the same deadline: a cancelled request (with no
    /// time bound at all) is refused with `deadlineExceeded`, and the same call without the
    /// cancellation answers.
    @Test func routesTablesTilesAndLocateHonourCancellation() throws {
        let snapshot = try QueryStore.get()
        let cancelled = Cancellation()
        cancelled.cancel()
        let gone = DeadlineTests.untimed(cancelled), open = DeadlineTests.untimed(Cancellation())
        let a = Point(lon: 14.4109, lat: 50.1167), b = Point(lon: 14.40519, lat: 50.11576)
        let route = RouteRequest(from: .point(a), to: .point(b))
        #expect(DeadlineTests.isDeadline { () throws(EngineError) in _ = try snapshot.route(route, deadline: gone) })
        #expect(try snapshot.route(route, deadline: open).route.metres > 0)
        let table = TableRequest(points: [a, b])
        #expect(DeadlineTests.isDeadline { () throws(EngineError) in _ = try snapshot.table(table, deadline: gone) })
        #expect(try snapshot.table(table, deadline: open).metres.count == 2)
        let legs = LegsRequest(points: [a, b, a])
        #expect(DeadlineTests.isDeadline { () throws(EngineError) in _ = try snapshot.route(through: legs, deadline: gone) })
        let districts = try snapshot.layer("districts")
        #expect(DeadlineTests.isDeadline { () throws(EngineError) in _ = try snapshot.vectorTile(districts, z: 10, x: 553, y: 346, deadline: gone) })
        #expect(try !snapshot.vectorTile(districts, z: 10, x: 553, y: 346, deadline: open).isEmpty)
        let venue = try snapshot.venue("wmu_library")
        #expect(DeadlineTests.isDeadline { () throws(EngineError) in _ = try snapshot.locate([("b3001", -78)], in: venue, deadline: gone) })
        #expect(try snapshot.locate([("b3001", -78)], in: venue, deadline: open).venue.name == "wmu_library")
    }

    /// The deadline's two halves: time and cancellation.
    @Test func aDeadlinePassesByTimeOrByCancellation() {
        let cancellation = Cancellation()
        let deadline = Deadline.after(seconds: 3600, cancellation: cancellation)
        #expect(!deadline.hasPassed && deadline.remainingSeconds > 3500)
        cancellation.cancel()
        #expect(deadline.hasPassed && deadline.remainingSeconds == 0)
        #expect(Deadline.after(seconds: 0).hasPassed)
        #expect(!Deadline.none.hasPassed && Deadline.none.remainingSeconds == .infinity)
        #expect(Deadline.after(seconds: .infinity) == .none)
    }
}
