import PostgresSupport

/// messaging-service's tables, in the `messaging` schema.
enum MessagingMigrations {
    /// Every migration, in order.
    static let all: [any DatabaseMigration] = [
        m0001PubSub, m0002Schedules, m0003ChannelRules, m0004Registrations, m0005PushCredentials, m0006Owners,
        m0007EmailTemplates, m0008PushQueue, m0009PushTemplates, m0010RealTimeWatch, m0011ChangeLog, m0012ChannelResume,
    ]

    /// Channels (created by the first publish or subscription that names them), their messages
    /// numbered per channel in commit order (the channel row is the counter, locked by each
    /// publish until it commits, so a poll that has seen message n has seen every earlier one),
    /// and polling subscriptions with the last message number each has been handed.
    static let m0001PubSub = SQLMigration(
        version: 1, name: "pub/sub channels, messages and subscriptions",
        statements: [
            "CREATE SCHEMA messaging",
            """
            CREATE TABLE messaging.channels (
                app_id text NOT NULL,
                name text NOT NULL,
                last_seq bigint NOT NULL,
                created bigint NOT NULL,
                PRIMARY KEY (app_id, name)
            )
            """,
            """
            CREATE TABLE messaging.messages (
                app_id text NOT NULL,
                channel text NOT NULL,
                seq bigint NOT NULL,
                id text NOT NULL,
                subtopic text,
                publisher_id text,
                headers jsonb NOT NULL,
                data jsonb NOT NULL,
                published_at bigint NOT NULL,
                status text NOT NULL,
                PRIMARY KEY (app_id, channel, seq),
                FOREIGN KEY (app_id, channel) REFERENCES messaging.channels ON DELETE CASCADE
            )
            """,
            "CREATE UNIQUE INDEX messages_by_id ON messaging.messages (app_id, id)",
            "CREATE INDEX messages_by_age ON messaging.messages (published_at)",
            """
            CREATE TABLE messaging.subscriptions (
                app_id text NOT NULL,
                id text NOT NULL,
                channel text NOT NULL,
                subscriber_id text,
                subtopic text,
                selector text,
                after_seq bigint NOT NULL,
                polled bigint NOT NULL,
                PRIMARY KEY (app_id, id),
                FOREIGN KEY (app_id, channel) REFERENCES messaging.channels ON DELETE CASCADE
            )
            """,
            "CREATE INDEX subscriptions_by_poll ON messaging.subscriptions (polled)",
        ])

    /// Scheduled and repeating publishes: each row fires at `next_at` (then every `repeat_every`
    /// ms until `repeat_expires_at`), claimed by one replica at a time (`FOR UPDATE SKIP LOCKED`)
    /// in the transaction that publishes the occurrence and moves the row on.
    static let m0002Schedules = SQLMigration(
        version: 2, name: "scheduled publishing",
        statements: [
            """
            CREATE TABLE messaging.schedules (
                app_id text NOT NULL,
                id text NOT NULL,
                channel text NOT NULL,
                subtopic text,
                publisher_id text,
                headers jsonb NOT NULL,
                data jsonb NOT NULL,
                next_at bigint NOT NULL,
                repeat_every bigint,
                repeat_expires_at bigint,
                occurrences bigint NOT NULL DEFAULT 0,
                status text NOT NULL CHECK (status IN ('scheduled', 'published', 'cancelled')),
                PRIMARY KEY (app_id, id),
                FOREIGN KEY (app_id, channel) REFERENCES messaging.channels ON DELETE CASCADE
            )
            """,
            "CREATE INDEX schedules_due ON messaging.schedules (next_at) WHERE status = 'scheduled'",
        ])

    /// Channels as permission containers (``ChannelAccess``): PUBLISH / SUBSCRIBE cells per user
    /// and role, the channel lower-cased, `''` the global matrix; each app's settings (how long
    /// a published message can be polled); and each message's end of retention, fixed when it is
    /// published so the sweeper finds expired messages by index whatever each app's setting.
    static let m0003ChannelRules = SQLMigration(
        version: 3, name: "channel permissions and app settings",
        statements: [
            """
            CREATE TABLE messaging.channel_permissions (
                app_id text NOT NULL,
                channel text NOT NULL,
                principal_kind text NOT NULL CHECK (principal_kind IN ('user', 'role')),
                principal text NOT NULL,
                operation text NOT NULL CHECK (operation IN ('PUBLISH', 'SUBSCRIBE')),
                decision text NOT NULL CHECK (decision IN ('GRANT', 'DENY')),
                PRIMARY KEY (app_id, channel, principal_kind, principal, operation)
            )
            """,
            """
            CREATE TABLE messaging.settings (
                app_id text PRIMARY KEY,
                retention bigint NOT NULL CHECK (retention > 0)
            )
            """,
            "ALTER TABLE messaging.messages ADD COLUMN expires_at bigint",
            "UPDATE messaging.messages SET expires_at = published_at + 60000",
            "ALTER TABLE messaging.messages ALTER COLUMN expires_at SET NOT NULL",
            "DROP INDEX messaging.messages_by_age",
            "CREATE INDEX messages_by_expiry ON messaging.messages (expires_at)",
        ])

    /// Devices registered for push: one row per device id of an app, its channels an array
    /// (found by the GIN index when a channel's devices are pushed to), its end in epoch ms.
    static let m0004Registrations = SQLMigration(
        version: 4, name: "device registrations",
        statements: [
            """
            CREATE TABLE messaging.registrations (
                app_id text NOT NULL,
                id text NOT NULL,
                device_id text NOT NULL,
                device_token text NOT NULL,
                os text NOT NULL CHECK (os IN ('IOS', 'ANDROID', 'WP', 'OSX')),
                os_version text,
                channels text[] NOT NULL,
                expiration bigint,
                updated bigint NOT NULL,
                PRIMARY KEY (app_id, device_id)
            )
            """,
            "CREATE INDEX registrations_by_channel ON messaging.registrations USING gin (channels)",
            "CREATE INDEX registrations_by_expiry ON messaging.registrations (expiration) WHERE expiration IS NOT NULL",
        ])

    /// Each app's push credentials: the shown part, and the private key sealed (``SecretBox``).
    static let m0005PushCredentials = SQLMigration(
        version: 5, name: "push credentials",
        statements: [
            """
            CREATE TABLE messaging.push_credentials (
                app_id text NOT NULL,
                provider text NOT NULL CHECK (provider IN ('apns', 'fcm')),
                summary jsonb NOT NULL,
                sealed_key text NOT NULL,
                updated bigint NOT NULL,
                PRIMARY KEY (app_id, provider)
            )
            """
        ])

    /// Who made each schedule (its occurrences are checked against the publisher's rights as
    /// they are when each fires, and a refused one ends the schedule as `failed`, saying why),
    /// who owns each registration (only they, or the server-code key, read, change or remove
    /// it), and each push credential's shown part as the exact text its sealed key is bound to.
    static let m0006Owners = SQLMigration(
        version: 6, name: "schedule publishers, registration owners, bound credential summaries",
        statements: [
            """
            ALTER TABLE messaging.schedules ADD COLUMN publisher_user text,
                ADD COLUMN publisher_roles text[] NOT NULL DEFAULT '{}', ADD COLUMN error_message text,
                DROP CONSTRAINT schedules_status_check,
                ADD CONSTRAINT schedules_status_check CHECK (status IN ('scheduled', 'published', 'cancelled', 'failed'))
            """,
            "ALTER TABLE messaging.registrations ADD COLUMN owner_id text",
            "ALTER TABLE messaging.push_credentials ALTER COLUMN summary TYPE text USING summary::text",
        ])

    /// Each app's email templates by exact name.
    static let m0007EmailTemplates = SQLMigration(
        version: 7, name: "email templates",
        statements: [
            """
            CREATE TABLE messaging.email_templates (
                app_id text NOT NULL,
                name text NOT NULL,
                subject text NOT NULL,
                text_body text,
                html_body text,
                updated bigint NOT NULL,
                PRIMARY KEY (app_id, name)
            )
            """
        ])

    /// Push delivery, durable: a job per pushed message (its targets, and how far its expansion
    /// into deliveries has got through the registrations, by device id), and a delivery per
    /// device with its attempts, next attempt and result; schedules keep their push targets and
    /// whether subscribers get the message too.
    static let m0008PushQueue = SQLMigration(
        version: 8, name: "push delivery queue",
        statements: [
            """
            CREATE TABLE messaging.push_jobs (
                app_id text NOT NULL,
                message_id text NOT NULL,
                channel text NOT NULL,
                targets jsonb NOT NULL,
                data jsonb NOT NULL,
                headers jsonb NOT NULL,
                after_device text NOT NULL DEFAULT '',
                expanded boolean NOT NULL DEFAULT false,
                created bigint NOT NULL,
                PRIMARY KEY (app_id, message_id)
            )
            """,
            "CREATE INDEX push_jobs_to_expand ON messaging.push_jobs (created) WHERE NOT expanded",
            "CREATE INDEX push_jobs_by_age ON messaging.push_jobs (created)",
            """
            CREATE TABLE messaging.push_deliveries (
                app_id text NOT NULL,
                message_id text NOT NULL,
                device_id text NOT NULL,
                os text NOT NULL,
                device_token text NOT NULL,
                registered bigint NOT NULL,
                status text NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
                attempts integer NOT NULL DEFAULT 0,
                next_attempt bigint NOT NULL,
                result text,
                PRIMARY KEY (app_id, message_id, device_id),
                FOREIGN KEY (app_id, message_id) REFERENCES messaging.push_jobs ON DELETE CASCADE
            )
            """,
            "CREATE INDEX push_deliveries_due ON messaging.push_deliveries (next_attempt) WHERE status = 'pending'",
            "ALTER TABLE messaging.schedules ADD COLUMN push_targets jsonb, ADD COLUMN pubsub boolean NOT NULL DEFAULT true",
        ])

    /// Each app's push templates by exact name: the push each one publishes.
    static let m0009PushTemplates = SQLMigration(
        version: 9, name: "push templates",
        statements: [
            """
            CREATE TABLE messaging.push_templates (
                app_id text NOT NULL,
                name text NOT NULL,
                body text NOT NULL,
                PRIMARY KEY (app_id, name)
            )
            """
        ])

    /// Until when some messaging-service has real-time subscribers on a channel: only then does a
    /// publish announce itself (a NOTIFY serialises commits).
    static let m0010RealTimeWatch = SQLMigration(
        version: 10, name: "real-time watch",
        statements: ["ALTER TABLE messaging.channels ADD COLUMN watched_until bigint NOT NULL DEFAULT 0"])

    /// The change log: data change events copied out of the logical slot by whichever instance
    /// holds the relay lock, numbered by their place in commit order, kept for the resume window
    /// and read by every instance; and where each real-time client's data subscriptions stood
    /// when its connection closed, so a reconnect within the window resumes without loss.
    static let m0011ChangeLog = SQLMigration(
        version: 11, name: "real-time change log and resume points",
        statements: [
            """
            CREATE TABLE messaging.change_log (
                commit_lsn bigint NOT NULL,
                index int NOT NULL,
                app_id text NOT NULL,
                table_name text NOT NULL,
                event text NOT NULL,
                logged_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (commit_lsn, index)
            )
            """,
            "CREATE INDEX change_log_by_table ON messaging.change_log (app_id, table_name, commit_lsn, index)",
            "CREATE INDEX change_log_by_age ON messaging.change_log (logged_at)",
            """
            CREATE TABLE messaging.rt_resume (
                app_id text NOT NULL,
                client_id text NOT NULL,
                subscription_id text NOT NULL,
                user_id text NOT NULL,
                commit_lsn bigint NOT NULL,
                index int NOT NULL,
                expires_at timestamptz NOT NULL,
                PRIMARY KEY (app_id, client_id, subscription_id, user_id)
            )
            """,
            "CREATE INDEX rt_resume_by_expiry ON messaging.rt_resume (expires_at)",
        ])

    /// A resume point is a data change's position or a channel message's number.
    static let m0012ChannelResume = SQLMigration(
        version: 12, name: "resume points of channel subscriptions",
        statements: [
            """
            ALTER TABLE messaging.rt_resume ALTER COLUMN commit_lsn DROP NOT NULL, ALTER COLUMN index DROP NOT NULL,
                ADD COLUMN message bigint,
                ADD CONSTRAINT rt_resume_one_place CHECK ((commit_lsn IS NOT NULL AND index IS NOT NULL) <> (message IS NOT NULL))
            """
        ])
}
