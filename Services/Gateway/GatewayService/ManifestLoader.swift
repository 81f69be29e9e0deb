import InternalProtocol
import Logging
import NIOCore
import ServiceLifecycle
import ServiceRuntime

/// Keeps ``GatewayRoutes`` in step with the services: asks each for its ``SystemRoutes``
/// manifest every half second until all have answered, then every refresh interval, so a
/// redeployed service's new routes are picked up without restarting the gateway.
struct ManifestLoader: Service {
    let routes: GatewayRoutes
    let peers: InternalClient
    let refresh: Duration
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                await loadAll()
                let wait = routes.missing.isEmpty ? refresh : .milliseconds(500)
                try? await Task.sleep(for: wait)
            }
        }
    }

    /// Asks every service at once; one that does not answer keeps its previous manifest.
    func loadAll() async {
        await withTaskGroup(of: Void.self) { group in
            for service in routes.services {
                group.addTask {
                    let context = CallContext(deadline: .now() + .seconds(5), logger: logger)
                    do {
                        let manifest = try await peers.call(SystemRoutes.self, Empty(), on: service, context: context)
                        guard manifest.service == service else { return }
                        routes.update(manifest)
                    } catch {
                        logger.debug(
                            "routes not loaded", metadata: ["peer": "\(service.executable)", "error": "\(error)"])
                    }
                }
            }
        }
    }
}
