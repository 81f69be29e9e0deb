import InternalProtocol
import Logging
import PostgresSupport
import ServiceRuntime

/// messaging-service: email delivery through an SMTP relay (``MailRelay`` lists its settings) and
/// publish/subscribe channels with polling subscriptions (``PubSubRoutes``); push and device
/// registrations arrive with the increments that build them.
public enum MessagingService: BackendService {
    public static let name = ServiceName.messaging

    public static let migrations: [any DatabaseMigration] = MessagingMigrations.all

    public static func register(
        operations: inout OperationRegistry, routes: inout PublicRoutes, environment: ServiceEnvironment
    ) throws {
        let mailer = Mailer(relay: try MailRelay.read(environment.configuration.reader))
        operations.register(SendEmail.self) { request, context in
            try await mailer.send(request, within: context)
        }
        EmailRoutes(mailer: mailer).add(to: &routes)
        let store = MessageStore(database: environment.database, logger: environment.logger)
        PubSubRoutes(store: store).add(to: &routes)
        // Messages past their retention and idle subscriptions go; due schedules publish (each
        // occurrence once across replicas: MessageStore.fireDue).
        environment.background.add(
            PeriodicService(every: .seconds(10), logger: environment.logger, failure: "messages not swept") {
                while try await store.sweep() > 0 {}
            })
        environment.background.add(
            PeriodicService(every: .milliseconds(250), logger: environment.logger, failure: "scheduled messages not published") {
                while try await store.fireDue() > 0 {}
            })
    }
}
