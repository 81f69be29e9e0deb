import Logging
import PostgresSupport
import ServiceLifecycle
import TestSupport
import Testing

/// ``DatabaseHealth`` finds a server it can reach reachable and one that refuses connections
/// unreachable, without waiting on any pool.
@Suite(.timeLimit(.minutes(2))) struct DatabaseHealthTests {
    @Test func aServerThatAnswersIsReachableAndARefusingOneIsNot() async throws {
        var closed = TestDatabase.server
        closed.port = try await FreePort.next()
        let up = DatabaseHealth(
            configuration: TestDatabase.server, interval: .milliseconds(50), logger: TestDatabase.logger)
        let down = DatabaseHealth(configuration: closed, interval: .milliseconds(50), logger: TestDatabase.logger)
        let group = ServiceGroup(configuration: .init(services: [up, down], logger: TestDatabase.logger))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            while down.isReachable { try await Task.sleep(for: .milliseconds(20)) }
            try await Task.sleep(for: .milliseconds(300))
            #expect(up.isReachable)
            #expect(!down.isReachable)
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }
}
