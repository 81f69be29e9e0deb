import Foundation
import Hummingbird
import Logging
import PostgresNIO

/// The single-process floor of GET by id: the smallest Swift server answering the product's
/// route with the same JSON — Hummingbird, a PostgresNIO pool, one prepared statement, the
/// database's JSON text passed through. The benchmark runs it beside the product, so the report
/// shows what the product's architecture costs beyond the language and its libraries.
/// Environment: `BENCH_FLOOR_PORT`, `BENCH_SCHEMA` (the app's schema), `BENCH_PG_HOST`,
/// `BENCH_PG_PORT`, `BENCH_PG_USER`, `BENCH_PG_PASSWORD`, `BENCH_PG_DATABASE`.
@main
struct BenchFloor {
    static func main() async throws {
        let environment = ProcessInfo.processInfo.environment
        let logger = {
            var logger = Logger(label: "bench-floor")
            logger.logLevel = .warning
            return logger
        }()
        let database = PostgresClient(
            configuration: .init(
                host: environment["BENCH_PG_HOST"] ?? "127.0.0.1",
                port: Int(environment["BENCH_PG_PORT"] ?? "") ?? 5432,
                username: environment["BENCH_PG_USER"] ?? "baas", password: environment["BENCH_PG_PASSWORD"],
                database: environment["BENCH_PG_DATABASE"] ?? "baas", tls: .disable),
            backgroundLogger: logger)
        let router = Router()
        router.get(":app/:key/data/Item/:id") { _, context -> Response in
            let id = try context.parameters.require("id")
            for try await json in try await database.execute(ItemByID(id: id), logger: logger) {
                return Response(
                    status: .ok, headers: [.contentType: "application/json"],
                    body: .init(byteBuffer: ByteBuffer(string: json)))
            }
            return Response(status: .notFound)
        }
        let port = Int(environment["BENCH_FLOOR_PORT"] ?? "") ?? 8089
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)), logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await database.run() }
            group.addTask { try await app.runService() }
            try await group.next()
            group.cancelAll()
        }
    }
}

/// The product's statement for GET by id (see `Benchmarks/pgbench/get_by_id.sql`).
struct ItemByID: PostgresPreparedStatement {
    static let schema = ProcessInfo.processInfo.environment["BENCH_SCHEMA"] ?? "public"
    static var sql: String {
        """
        SELECT row_to_json(r)::text FROM (SELECT t."objectId", (extract(epoch from t.created) * 1000)::bigint AS created,
        (extract(epoch from t.updated) * 1000)::bigint AS updated, t."ownerId", t.k, t.name, $2::text AS "___class"
        FROM "\(schema)"."Item" t WHERE t."objectId" = $1::text) r
        """
    }
    typealias Row = String

    let id: String

    func makeBindings() -> PostgresBindings {
        var bindings = PostgresBindings()
        bindings.append(id)
        bindings.append("Item")
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> String { try row.decode(String.self) }
}
