import Configuration
import Foundation
import InternalProtocol
import Logging
import PostgresNIO
import PostgresSupport
import ServiceLifecycle
import UnixSignals

/// The command line every executable shares:
/// - `serve` (the default): run until SIGTERM or SIGINT, then shut down gracefully;
/// - `migrate`: apply this service's migrations and exit;
/// - `pki-init [DIR]`: write the internal CA and every service's certificate (default `BAAS_PKI_DIR`).
package enum ServiceCommand {
    /// Runs a backend executable.
    package static func main<Backend: BackendService>(_ backend: Backend.Type, arguments: [String]) async throws {
        let configuration = RuntimeConfiguration(service: Backend.name, reader: .fromEnvironment())
        Observability.bootstrapLogging(level: configuration.logLevel)
        let logger = Logger(label: Backend.name.executable)
        switch arguments.first ?? "serve" {
        case "serve":
            let tls = try TLSMaterial(directory: configuration.pkiDirectory, name: Backend.name.executable)
            let parts = try Backend.parts(configuration: configuration, tls: tls, logger: logger)
            try await runUntilSignalled(parts, logger: logger)
        case "migrate":
            try await migrate(Backend.self, configuration: configuration, logger: logger)
        default:
            try runCommon(arguments, configuration: configuration)
        }
    }

    /// Handles the commands every executable shares that need no service: `pki-init`.
    package static func runCommon(_ arguments: [String], configuration: RuntimeConfiguration) throws {
        switch arguments.first {
        case "pki-init":
            let directory = arguments.dropFirst().first ?? configuration.pkiDirectory
            try InternalPKI.initialize(directory: directory)
            print("internal PKI ready in \(directory)")
        default:
            throw UsageError(
                "usage: \(configuration.service.executable) [serve | migrate | pki-init [DIR]]")
        }
    }

    /// Applies a backend's migrations and prints what was applied.
    package static func migrate<Backend: BackendService>(
        _ backend: Backend.Type, configuration: RuntimeConfiguration, logger: Logger
    ) async throws {
        let applied = try await PostgresClient.with(configuration.database, logger: logger) { client in
            var applied: [Int] = []
            for runner in Backend.migrationRunners { applied += try await runner.apply(on: client, logger: logger) }
            return applied
        }
        print("\(Backend.name.executable): applied migrations \(applied)")
    }

    /// Runs parts in one `ServiceGroup` that shuts down gracefully on SIGTERM or SIGINT.
    package static func runUntilSignalled(_ parts: ServiceParts, logger: Logger) async throws {
        let group = ServiceGroup(
            configuration: .init(
                services: parts.services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}

/// A command line that could not be understood; its message is the usage line.
package struct UsageError: Error, CustomStringConvertible {
    /// The usage text.
    package let description: String
    /// Creates an error.
    package init(_ description: String) { self.description = description }
}

extension ServiceCommand {
    /// Runs `body`; on an error prints it to standard error and exits with status 1, so a bad
    /// command line or an unreachable database ends with a message instead of a crash.
    package static func exitOnError(_ body: @Sendable () async throws -> Void) async {
        do {
            try await body()
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            exit(1)
        }
    }
}
