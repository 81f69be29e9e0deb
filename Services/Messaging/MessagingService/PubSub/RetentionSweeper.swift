import Logging
import ServiceLifecycle
import ServiceRuntime

/// Removes messages past their retention and subscriptions left unpolled, a batch at a time;
/// every replica sweeps, and the deletes skip nothing another replica needs.
struct RetentionSweeper: Service {
    let store: MessageStore
    /// How often to sweep.
    let interval: Duration

    func run() async throws {
        await repeatUntilShutdown(every: interval, logger: store.logger, failure: "messages not swept") {
            while try await store.sweep() > 0 {}
        }
    }
}
