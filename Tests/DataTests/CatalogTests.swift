import DataEngine
import Foundation
import InternalProtocol
import Permissions
import PostgresNIO
import PostgresSupport
import Synchronization
import TestSupport
import Testing

/// The catalog cache across instances: a schema change made by one engine reaches another
/// through `pg_notify`, without the other querying the catalog on every read.
@Suite(.timeLimit(.minutes(20))) struct CatalogTests {
    @Test func aSchemaChangeOnOneInstanceReachesAnother() async throws {
        try await EngineFixture.with { fixture in
            let second = DataEngine(database: fixture.database, logger: fixture.logger)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await second.listener.run() }
                defer { group.cancelAll() }
                try await fixture.waitUntilListening(second)
                _ = try await fixture.create("Shared", #"{"a": 1}"#)
                let query = FindQuery()
                _ = try await second.find("Shared", query: query, identity: fixture.rest, logger: fixture.logger)
                let warm = second.statements.value
                _ = try await second.find("Shared", query: query, identity: fixture.rest, logger: fixture.logger)
                #expect(second.statements.value - warm == 1, "a warm read queried the catalog")
                _ = try await fixture.create("Shared", #"{"a": 2, "b": "new"}"#)
                var seen = false
                for _ in 0..<600 where !seen {
                    let props = try await second.properties("Shared", identity: fixture.rest)
                    seen = (props.array ?? []).contains { $0.object?["name"]?.string == "b" }
                    if !seen { try await Task.sleep(for: .milliseconds(50)) }
                }
                #expect(seen, "the second instance never saw the new column")
            }
        }
    }

    @Test func announcementsDropOnlyOlderEntries() async throws {
        let versions = Mutex<[String: Int64]>([:])
        let loadsCount = Mutex(0)
        let cache = CatalogCache { appID in
            loadsCount.withLock { $0 += 1 }
            var catalog = AppCatalog(appID: appID)
            catalog.version = versions.withLock { $0[appID, default: 0] }
            return catalog
        }
        versions.withLock { $0["a"] = 2 }
        #expect(try await cache.catalog(for: "a").version == 2)
        await cache.invalidate("a", below: 2)
        #expect(try await cache.catalog(for: "a").version == 2)
        #expect(loadsCount.withLock { $0 } == 1, "an announcement of the held version dropped the entry")
        await cache.invalidate("a", below: 3)
        var stale = AppCatalog(appID: "a")
        stale.version = 2
        await cache.store(stale)
        versions.withLock { $0["a"] = 3 }
        #expect(try await cache.catalog(for: "a").version == 3, "a stale store outlived a newer announcement")
        #expect(loadsCount.withLock { $0 } == 2)
    }

    /// Read-your-writes across instances (``CatalogFreshness``): a permission change made on one
    /// instance reports its catalog version; another instance whose cached catalog predates it
    /// (the announcement not heard: here it has no listener at all) answers from its cache —
    /// unless the request carries that version as its floor, when it reads the committed catalog.
    @Test func aRequestCarryingAChangesVersionSeesItOnAnInstanceThatHasNotHeardOfIt() async throws {
        try await EngineFixture.with { fixture in
            let second = DataEngine(database: fixture.database, logger: fixture.logger)
            _ = try await fixture.create("Guarded", #"{"a": 1}"#)
            let query = try FindQuery(QueryParameters(queryItems: []))
            func find() async throws -> Int {
                try await second.find("Guarded", query: query, identity: fixture.rest, logger: fixture.logger).count
            }
            #expect(try await find() == 1)
            let report = CatalogFreshness.Report(appID: fixture.appID)
            try await CatalogFreshness.$report.withValue(report) {
                try await fixture.engine.setRulePermission(
                    PermissionChange(decision: .deny, operation: .find, principal: .role(Principal.everyone)),
                    table: "Guarded", identity: fixture.serverCode, logger: fixture.logger)
            }
            let version = try #require(report.version)
            #expect(try await find() == 1, "the second instance's cache predates the change")
            try await fixture.expectCode(1023, "with the change's version as the floor") {
                try await CatalogFreshness.$floor.withValue(.init(appID: fixture.appID, version: version)) {
                    try await find()
                }
            }
            try await fixture.expectCode(1023, "the committed catalog is kept") { try await find() }
            // A floor for another app changes nothing for this one.
            let other = CatalogFreshness.Floor(appID: "other", version: version + 10)
            #expect(CatalogFreshness.$floor.withValue(other) { CatalogFreshness.required(for: fixture.appID) } == 0)
        }
    }

    /// A table's `properties` follow the same floor: a column another instance added a moment ago
    /// is listed when the request carries the version that added it, and not read past the cache
    /// otherwise (listing properties costs no database read when the cache is fresh).
    @Test func propertiesListAColumnAddedElsewhereWhenTheRequestCarriesItsVersion() async throws {
        try await EngineFixture.with { fixture in
            let second = DataEngine(database: fixture.database, logger: fixture.logger)
            _ = try await fixture.create("Listed", #"{"a": 1}"#)
            func names() async throws -> [String] {
                let properties = try await second.properties("Listed", identity: fixture.rest)
                return properties.array?.compactMap { $0.object?["name"]?.string } ?? []
            }
            #expect(try await !names().contains("late"))
            let report = CatalogFreshness.Report(appID: fixture.appID)
            try await CatalogFreshness.$report.withValue(report) {
                _ = try await fixture.create("Listed", #"{"a": 2, "late": "x"}"#)
            }
            let version = try #require(report.version)
            #expect(try await !names().contains("late"), "the second instance's cache predates the column")
            let floor = CatalogFreshness.Floor(appID: fixture.appID, version: version)
            let listed = try await CatalogFreshness.$floor.withValue(floor) { try await names() }
            #expect(listed.contains("late"), "\(listed)")
        }
    }

    @Test(.tags(.fast)) func aReportKeepsTheNewestVersionOfItsOwnAppOnly() {
        let report = CatalogFreshness.Report(appID: "a")
        #expect(report.version == nil)
        report.note(3, for: "a")
        report.note(2, for: "a")
        report.note(9, for: "b")
        #expect(report.version == 3)
    }

    @Test(.tags(.fast)) func theCacheKeepsAtMostItsCapacityAndStillAnswersEveryApp() async throws {
        let loads = Mutex<[String: Int]>([:])
        let cache = CatalogCache(capacity: 3) { appID in
            loads.withLock { $0[appID, default: 0] += 1 }
            return AppCatalog(appID: appID)
        }
        let apps = (0..<10).map { "app\($0)" }
        for _ in 0..<2 {
            for app in apps { #expect(try await cache.catalog(for: app).appID == app) }
        }
        #expect(await cache.count == 3)
        #expect(loads.withLock { $0.values.reduce(0, +) } > apps.count, "dropped apps are loaded again")
        // Announcements beyond four times the capacity start afresh rather than grow.
        for (offset, app) in (0..<13).map({ "announced\($0)" }).enumerated() {
            await cache.invalidate(app, below: Int64(offset + 1))
        }
        #expect(await cache.count == 0)
    }
}
