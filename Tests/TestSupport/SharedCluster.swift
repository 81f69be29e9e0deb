import Foundation
import Logging
import PostgresNIO
import PostgresSupport
import ServiceRuntime
import UsersService

extension TestCluster {
    /// Runs `body` against the test process's shared cluster with an app of its own: the seven
    /// services start once, for the first test that asks, and serve every test that needs no
    /// private one, each in its own app (its own tables, users, files, channels and keys), so a
    /// test costs an app instead of seven processes' start-up. Tests that stop, kill or
    /// reconfigure a service, read the whole database, or rely on per-address limits use
    /// ``with(environment:replacing:timeLimit:_:)`` instead.
    /// - Parameter timeLimit: the test's own limit, from when it holds a ``ClusterSlots`` slot
    ///   (the shared start-up counts against the tests that wait for it).
    package static func shared<Result: Sendable>(
        timeLimit: Duration = .seconds(300), _ body: @Sendable (TestCluster) async throws -> Result
    ) async throws -> Result {
        // A slot still bounds how many tests run at once: the shared services' pools are sized
        // for a handful of clients, as a private cluster's are.
        try await ClusterSlots.withSlot(timeLimit: timeLimit) {
            let host = try await SharedClusterHost.instance.cluster()
            let app = try await PostgresClient.with(host.database, logger: TestDatabase.logger) { client in
                try await AppRepository(database: client).create(
                    name: "test app \(UUID().uuidString)", logger: TestDatabase.logger)
            }
            return try await body(host.serving(app))
        }
    }
}

/// Starts the shared cluster once and hands it out; it runs until the test process exits.
actor SharedClusterHost {
    static let instance = SharedClusterHost()

    private enum State {
        case idle
        case starting
        case running(TestCluster)
        case failed(any Error)
    }

    private var state = State.idle

    /// The shared cluster, started by the first call; later calls wait for it (cancellably).
    func cluster() async throws -> TestCluster {
        while true {
            switch state {
            case .running(let cluster): return cluster
            case .failed(let error): throw error
            case .idle:
                state = .starting
                Task.detached { await Self.run(on: self) }
            case .starting:
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }

    private func started(_ cluster: TestCluster) { state = .running(cluster) }
    private func failed(_ error: any Error) { state = .failed(error) }

    /// Runs the cluster, outside any test's task, until the process ends. Many tests log in from
    /// one address, so the per-address login limit is lifted here.
    private static func run(on host: SharedClusterHost) async {
        let environment = ["BAAS_USERS_LOGIN_ATTEMPTS_PER_ADDRESS_PER_MINUTE": "100000"]
        do {
            try await TestCluster.start(environment: environment, replacing: [:]) { cluster in
                await host.started(cluster)
                try await Task.sleep(for: .seconds(86_400 * 365))
            }
        } catch {
            await host.failed(error)
        }
    }
}
