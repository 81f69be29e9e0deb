import DataEngine
import InternalProtocol
import Logging
import PostgresSupport
import ServiceRuntime

/// messaging-service: email delivery through an SMTP relay (``MailRelay`` lists its settings) and
/// publish/subscribe channels with polling subscriptions (``PubSubRoutes``), channels as
/// permission containers (``ChannelAccess``) and device registrations (``RegistrationRoutes``);
/// push delivery arrives with the increment that builds it.
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
        let table = ChannelAccess.table(store)
        let rules = ChannelRulesCache(channel: table.channel) { app in try await table.rules(app: app) }
        environment.background.add(
            NotificationListener(database: environment.database, channel: rules.channel, consumer: rules, logger: environment.logger))
        let access = ChannelAccess(rules: rules)
        let registrations = RegistrationStore(database: environment.database, logger: environment.logger)
        PubSubRoutes(store: store, access: access).add(to: &routes)
        ChannelSettingsRoutes(store: store, rules: rules).add(to: &routes)
        RegistrationRoutes(store: registrations, access: access).add(to: &routes)
        let box = try SecretBox.read(environment.configuration.reader)
        PushCredentialRoutes(store: PushCredentialStore(database: environment.database, logger: environment.logger, box: box))
            .add(to: &routes)
        // Messages past their retention, idle subscriptions and expired registrations go; due
        // schedules publish (each occurrence once across replicas: MessageStore.fireDue).
        environment.background.add(
            PeriodicService(every: .seconds(10), logger: environment.logger, failure: "messages not swept") {
                while try await store.sweep() > 0 {}
                while try await registrations.sweep(now: MessageStore.now()) > 0 {}
            })
        environment.background.add(
            PeriodicService(every: .milliseconds(250), logger: environment.logger, failure: "scheduled messages not published") {
                while try await store.fireDue() > 0 {}
            })
    }
}
