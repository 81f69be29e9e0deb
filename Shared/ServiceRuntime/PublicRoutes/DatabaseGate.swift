import Hummingbird
import InternalProtocol
import PostgresSupport

/// Refuses a public request with 503 at once while ``DatabaseHealth`` finds PostgreSQL
/// unreachable: without it the request would wait for its deadline on a pool that cannot connect.
struct DatabaseGate: RouterMiddleware {
    typealias Context = PublicRequestContext
    let health: DatabaseHealth

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        guard health.isReachable else { throw ErrorEnvelope.databaseUnavailable }
        do {
            return try await next(request, context)
        } catch  where !health.isReachable {
            // Whatever failed, the outage that began meanwhile is the answer the client can use.
            throw ErrorEnvelope.databaseUnavailable
        }
    }
}
