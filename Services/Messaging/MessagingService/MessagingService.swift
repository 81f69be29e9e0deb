import Configuration
import DataEngine
import InternalProtocol
import Logging
import NIOCore
import PostgresSupport
import ServiceRuntime

/// messaging-service: email delivery through an SMTP relay (``MailRelay`` lists its settings),
/// email templates (``EmailTemplateRoutes``), and
/// publish/subscribe channels with polling subscriptions (``PubSubRoutes``), channels as
/// permission containers (``ChannelAccess``), device registrations (``RegistrationRoutes``) and
/// push to APNs and FCM from a durable queue (``PushDeliveryService``) with credentials set
/// through ``PushCredentialRoutes``.
package enum MessagingService: BackendService {
    package static let name = ServiceName.messaging

    package static let migrations: [any DatabaseMigration] = MessagingMigrations.all

    /// The data catalog, which the embedded data engine reads (template criteria) and the
    /// real-time relay's watches live in.
    package static let sharedMigrations: [(owner: ServiceName, migrations: [any DatabaseMigration])] = [
        (.data, CatalogMigrations.all)
    ]

    package static func register(
        operations: inout OperationRegistry, routes: inout PublicRoutes, environment: ServiceEnvironment
    ) throws {
        let attachmentLimit = environment.configuration.reader.scoped(to: "smtp").int(
            forKey: "maxAttachmentBytes", default: 10 << 20)
        guard attachmentLimit >= 1 else { throw UsageError("BAAS_SMTP_MAX_ATTACHMENT_BYTES must be positive") }
        let mailer = Mailer(
            relay: try MailRelay.read(environment.configuration.reader),
            files: AttachmentFiles(peers: environment.peers, limit: Int64(attachmentLimit)))
        operations.register(SendEmail.self) { request, context in
            try await mailer.send(request, within: context)
        }
        routes.publish(MessagingSchemas.all)
        routes.pathParameters = Self.pathParameters
        routes.removalPathParameters = [
            "name": DocumentExamples.named(DocumentExamples.disposableName),
            "deviceId": DocumentExamples.named(DocumentExamples.disposableDevice),
            "channel": DocumentExamples.named(DocumentExamples.disposableName),
        ]
        // Template criteria find users through the data engine, with the caller's rights.
        let engine = DataEngine(
            database: environment.database, logger: environment.logger, prepared: environment.preparedStatements)
        let access = try registerPubSub(routes: &routes, engine: engine, environment: environment)
        EmailRoutes(mailer: mailer, access: access).add(to: &routes)
        let templates = EmailTemplateStore(database: environment.database, logger: environment.logger)
        EmailTemplateRoutes(
            store: templates,
            mailer: TemplateMailer(templates: templates, mailer: mailer, engine: engine, logger: environment.logger),
            access: access
        ).add(to: &routes)
    }

    /// The messaging routes' path parameters, with the seeded examples (``DocumentExamples``).
    static let pathParameters: [String: APISchema] = [
        "channel": APISchema.string.matching("^[A-Za-z0-9_.-]{1,255}$").examples(.text(DocumentExamples.channel)),
        "name": APISchema.string.length(1).examples(.text(DocumentExamples.template)),
        "deviceId": APISchema.string.length(1).examples(.text(DocumentExamples.deviceID)),
        "provider": .choice(["apns", "fcm"]),
        "action": .permissionAction,
    ]

    /// Channels, their permissions, registrations and push credentials, with the background work
    /// that keeps them: the rules listener, the sweepers and the scheduler. Answers the channel
    /// access the email routes ask too.
    private static func registerPubSub(routes: inout PublicRoutes, engine: DataEngine, environment: ServiceEnvironment)
        throws -> ChannelAccess
    {
        let (database, logger) = (environment.database, environment.logger)
        let store = MessageStore(database: database, logger: logger)
        let table = ChannelAccess.table(store)
        let rules = ChannelRulesCache(channel: table.channel) { app in try await table.rules(app: app) }
        let access = ChannelAccess(rules: rules)
        let registrations = RegistrationStore(database: database, logger: logger)
        let credentials = PushCredentialStore(
            database: database, logger: logger, box: try SecretBox.read(environment.configuration.reader))
        let push = PushQueue(database: database, logger: logger)
        PubSubRoutes(store: store, access: access, push: push).add(to: &routes)
        ChannelSettingsRoutes(store: store, rules: rules).add(to: &routes)
        RegistrationRoutes(store: registrations, access: access).add(to: &routes)
        PushCredentialRoutes(store: credentials).add(to: &routes)
        PushTemplateRoutes(
            templates: PushTemplateStore(database: database, logger: logger), messages: store, access: access
        ).add(to: &routes)
        environment.background.add(
            PushDeliveryService(
                settings: PushSettings.read(environment.configuration.reader), queue: push, credentials: credentials,
                logger: logger))

        try registerRealTime(
            routes: &routes, store: store, access: access, rules: rules, engine: engine, environment: environment)
        // Messages past their retention, idle subscriptions, expired registrations and day-old
        // push jobs go; due schedules publish (each occurrence once across replicas:
        // MessageStore.fireDue); queued pushes go out (PushDeliveryService).
        environment.background.add(
            PeriodicService(every: .seconds(10), logger: logger, failure: "messages not swept") {
                while try await store.sweep() > 0 {}
            })
        environment.background.add(
            PeriodicService(every: .seconds(10), logger: logger, failure: "registrations not swept") {
                while try await registrations.sweep(now: MessageStore.now()) > 0 {}
                while try await push.sweep(now: MessageStore.now()) > 0 {}
            })
        environment.background.add(
            PeriodicService(every: .milliseconds(250), logger: logger, failure: "scheduled messages not published") {
                while try await store.fireDue(mayPublish: access.mayPublish) > 0 {}
            })
        return access
    }

    /// The real-time endpoint with its channel and data feeds, and the background work that
    /// feeds them: one listener (schema, channel rules, publishes, change log), the change relay,
    /// watch renewals and the change log's sweeper.
    private static func registerRealTime(
        routes: inout PublicRoutes, store: MessageStore, access: ChannelAccess, rules: ChannelRulesCache,
        engine: DataEngine,
        environment: ServiceEnvironment
    ) throws {
        let (database, logger) = (environment.database, environment.logger)
        let settings = try RealTimeSettings.read(environment.configuration.reader)
        let feed = ChannelFeed(store: store, access: access)
        let log = ChangeLog(database: database, logger: logger)
        let dataFeed = DataFeed(
            log: log, readRights: DataFeed.rights(from: engine), watchDuration: settings.watchDuration, logger: logger)
        let commands = CommandFeed(database: database, access: access, logger: logger)
        let live = RTSessions(settings: settings)
        // One connection listens for everything: pools may be small.
        environment.background.add(
            NotificationListener(
                database: database,
                channels: [
                    (CatalogChannel.name, engine.cache), (rules.channel, rules), (ChannelFeed.channel, feed),
                    (ChangeLog.channel, dataFeed),
                    (CommandFeed.channel, commands), (SessionsChannel.name, RTRevocations(live: live)),
                ], logger: logger))
        environment.background.add(
            ChangeRelay(log: log, feed: dataFeed, pollInterval: settings.changePollInterval, logger: logger))
        environment.background.add(
            PeriodicService(
                every: RealTimeSettings.watchRenewal, logger: logger, failure: "real-time watches not renewed"
            ) {
                try await feed.renewWatches()
                try await dataFeed.renewWatches()
            })
        // An announcement lost with a listener's connection delays delivery by a second at most.
        environment.background.add(
            PeriodicService(every: .seconds(1), logger: logger, failure: "real-time feeds not read") {
                await feed.catchUp()
                await dataFeed.catchUp()
            })
        environment.background.add(
            PeriodicService(every: .seconds(10), logger: logger, failure: "change log not swept") {
                try await log.sweep(retention: settings.logRetention)
            })
        environment.background.add(live)
        RTEndpoint(
            services: RTServices(
                feed: feed, data: dataFeed, engine: engine, commands: commands, log: log, access: access,
                peers: environment.peers, settings: settings,
                context: CallContext(deadline: .now(), logger: logger),
                filesPublicURL: environment.configuration.filesPublicURL),
            polling: PollingSessions(), live: live
        ).add(to: &routes)
    }
}
