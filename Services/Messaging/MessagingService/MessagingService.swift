import InternalProtocol
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
        environment.background.add(RetentionSweeper(store: store, interval: .seconds(10)))
    }
}
