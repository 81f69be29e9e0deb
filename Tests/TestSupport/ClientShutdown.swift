import AsyncHTTPClient
import ServiceRuntime

/// Runs `body` with `client` and shuts the client down however `body` ends. AsyncHTTPClient
/// traps when a client is released without a shutdown, which would end the whole test process
/// and hide the failure that skipped it.
@discardableResult
package func withShutdown<Result: Sendable>(
    _ client: HTTPClient, _ body: () async throws -> Result
) async throws -> Result {
    let result: Result
    do {
        result = try await body()
    } catch {
        try? await client.shutdown()
        throw error
    }
    try await client.shutdown()
    return result
}

extension InternalClient {
    /// Runs `body` with this client and shuts it down however `body` ends.
    @discardableResult
    package func using<Result: Sendable>(_ body: (InternalClient) async throws -> Result) async throws -> Result {
        let result: Result
        do {
            result = try await body(self)
        } catch {
            try? await shutdown()
            throw error
        }
        try await shutdown()
        return result
    }
}
