import DataAPI
import DataEngine
import InternalProtocol
import QueryLanguage
import ServiceRuntime

/// A QuickBlox list request (`GET data/{class}.json?…`) as the engine's find: the filters of
/// ``QuickBloxFilter``, `skip`, `limit` (1 to 1,000, default 100; `-1`: only the last record),
/// `count=1`, and `output[include|exclude]` (`_id` comes along unless excluded).
struct QuickBloxFind: Sendable {
    /// The find the filters make.
    private(set) var query = FindQuery()
    /// `skip`.
    let skip: Int
    /// `limit`, or -1 for the last record.
    let limit: Int
    /// `count=1`.
    let countOnly: Bool
    /// Whether whole objects are answered (no `output[include]`).
    let whole: Bool

    /// Reads the query string's pairs; 1017 for a malformed filter, 1016 for a bad skip or limit.
    init(_ items: [(name: String, value: String)]) throws {
        let filter = try DataError.parsing { () throws(QueryLanguageError) in try QuickBloxFilter.parse(items) }
        guard filter.limit == -1 || (1...QuickBloxRoutes.maximumLimit).contains(filter.limit), filter.skip >= 0 else {
            throw DataError.invalidParameter(
                "limit must be between 1 and \(QuickBloxRoutes.maximumLimit) (or -1), skip at least 0")
        }
        skip = filter.skip
        limit = filter.limit
        countOnly = filter.countOnly
        whole = filter.include == nil
        query.condition = filter.condition
        query.sort = filter.sort
        let excluded = filter.exclude ?? []
        if var include = filter.include {
            if !excluded.contains("objectId") && !include.contains("objectId") { include.insert("objectId", at: 0) }
            query.properties = include.map { SelectItem(expression: .property(PropertyPath([$0])), alias: nil) }
        }
        query.excluded = excluded
    }

    /// The page's objects: `limit` of them after `skip`, or the last one.
    func items(_ table: String, engine: DataEngine, call: PublicCall) async throws -> [String] {
        let logger = call.context.logger
        if limit == -1 {
            let last = try await engine.edge(table, last: true, query: query, identity: call.identity, logger: logger)
            return last.map { [$0] } ?? []
        }
        var page = query
        page.pageSize = limit
        page.offset = skip
        return try await engine.find(table, query: page, identity: call.identity, logger: logger)
    }

    /// The page's `skip` and `limit` as answered (`-1` answers one record from 0).
    var answeredBounds: (skip: Int, limit: Int) { limit == -1 ? (0, 1) : (skip, limit) }
}
