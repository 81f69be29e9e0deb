import DataEngine
import Foundation
import PostgresNIO
import PostgresSupport
import TestSupport
import Testing

@testable import GeoService

/// geo-service's store on a fresh migrated database, for tests that need many points without a
/// request each.
struct GeoFixture: Sendable {
    let store: GeoStore
    let app = UUID().uuidString

    static func with(_ body: @Sendable (GeoFixture) async throws -> Void) async throws {
        try await TestDatabase.with { configuration in
            try await PostgresClient.with(configuration.with(maximumConnections: 8), logger: TestDatabase.logger) {
                client in
                try await MigrationRunner(owner: "geo", migrations: GeoService.migrations).apply(
                    on: client, logger: TestDatabase.logger)
                try await body(GeoFixture(store: GeoStore(database: client, logger: TestDatabase.logger)))
            }
        }
    }

    /// Saves `points` eight at a time through the store; answers them with their ids.
    func save(_ points: [SamplePoint]) async throws -> [SamplePoint] {
        try await withThrowingTaskGroup(of: [SamplePoint].self) { group in
            let lanes = 8
            for lane in 0..<lanes {
                group.addTask {
                    var saved: [SamplePoint] = []
                    for index in stride(from: lane, to: points.count, by: lanes) {
                        var point = points[index]
                        let change = GeoStore.Change(
                            coordinate: point.coordinate, categories: point.categories, metadata: point.metadata)
                        point.id = try await store.insert(app: app, change, owner: nil).objectId
                        saved.append(point)
                    }
                    return saved
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
    }

    /// Every item a search finds, page after page.
    func all(_ search: GeoSearch) async throws -> [GeoItem] {
        var search = search
        search.pageSize = GeoSearch.maximumPageSize
        search.offset = 0
        var items: [GeoItem] = []
        while true {
            let page: [GeoItem]
            do {
                page = try await store.find(app: app, search)
            } catch let error as PSQLError {
                // PSQLError hides the server's message from its description; a failing test needs it.
                throw DatabaseFailure(description: String(reflecting: error))
            }
            items += page
            guard page.count == search.pageSize else { return items }
            search.offset += page.count
        }
    }
}

/// A point the tests save, with what an oracle needs to know about it.
struct SamplePoint: Sendable {
    var id = ""
    let coordinate: Coordinate
    let categories: [String]
    let metadata: JSONObject
}

extension PostgresSupport.DatabaseConfiguration {
    func with(maximumConnections: Int) -> Self {
        var copy = self
        copy.maximumConnections = maximumConnections
        return copy
    }
}

/// A statement failed; the description is PostgreSQL's own report.
struct DatabaseFailure: Error, CustomStringConvertible {
    let description: String
}
