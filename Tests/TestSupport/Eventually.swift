/// Reads `read` until `done` holds of what it returned, or `limit` has passed: the last value
/// either way, for the test's expectation to judge. For what crosses services asynchronously by
/// design (a schema or permission change reaches another service's cache by notification).
package func eventually<Value: Sendable>(
    within limit: Duration = .seconds(30), _ read: @Sendable () async throws -> Value,
    until done: (Value) -> Bool
) async throws -> Value {
    let deadline = ContinuousClock.now + limit
    var value = try await read()
    while !done(value), ContinuousClock.now < deadline {
        try await Task.sleep(for: .milliseconds(100))
        value = try await read()
    }
    return value
}
