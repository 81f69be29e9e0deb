import DataEngine
import InternalProtocol
import Logging
import PostgresSupport
import ServiceRuntime

/// messaging-service: email delivery through an SMTP relay (``MailRelay`` lists its settings),
/// email templates (``EmailTemplateRoutes``), and
/// publish/subscribe channels with polling subscriptions (``PubSubRoutes``), channels as
/// permission containers (``ChannelAccess``), device registrations (``RegistrationRoutes``) and
/// push credentials (``PushCredentialRoutes``); push delivery arrives with the increment that
/// builds it.
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
        // Template criteria find users through the data engine, with the caller's rights.
        let engine = DataEngine(database: environment.database, logger: environment.logger)
        environment.background.add(engine.listener)
        let templates = EmailTemplateStore(database: environment.database, logger: environment.logger)
        EmailTemplateRoutes(
            store: templates, mailer: TemplateMailer(templates: templates, mailer: mailer, engine: engine, logger: environment.logger)
        ).add(to: &routes)
        try registerPubSub(routes: &routes, environment: environment)
    }

    /// Channels, their permissions, registrations and push credentials, with the background work
    /// that keeps them: the rules listener, the sweepers and the scheduler.
    private static func registerPubSub(routes: inout PublicRoutes, environment: ServiceEnvironment) throws {
        let (database, logger) = (environment.database, environment.logger)
        let store = MessageStore(database: database, logger: logger)
        let table = ChannelAccess.table(store)
        let rules = ChannelRulesCache(channel: table.channel) { app in try await table.rules(app: app) }
        let access = ChannelAccess(rules: rules)
        let registrations = RegistrationStore(database: database, logger: logger)
        let box = try SecretBox.read(environment.configuration.reader)
        PubSubRoutes(store: store, access: access).add(to: &routes)
        ChannelSettingsRoutes(store: store, rules: rules).add(to: &routes)
        RegistrationRoutes(store: registrations, access: access).add(to: &routes)
        PushCredentialRoutes(store: PushCredentialStore(database: database, logger: logger, box: box)).add(to: &routes)

        environment.background.add(NotificationListener(database: database, channel: rules.channel, consumer: rules, logger: logger))
        // Messages past their retention, idle subscriptions and expired registrations go; due
        // schedules publish (each occurrence once across replicas: MessageStore.fireDue).
        environment.background.add(
            PeriodicService(every: .seconds(10), logger: logger, failure: "messages not swept") {
                while try await store.sweep() > 0 {}
            })
        environment.background.add(
            PeriodicService(every: .seconds(10), logger: logger, failure: "registrations not swept") {
                while try await registrations.sweep(now: MessageStore.now()) > 0 {}
            })
        environment.background.add(
            PeriodicService(every: .milliseconds(250), logger: logger, failure: "scheduled messages not published") {
                while try await store.fireDue(mayPublish: access.mayPublish) > 0 {}
            })
    }
}
