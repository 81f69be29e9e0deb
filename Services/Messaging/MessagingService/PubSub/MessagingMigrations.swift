import PostgresSupport

/// messaging-service's tables, in the `messaging` schema.
enum MessagingMigrations {
    /// Every migration, in order.
    static let all: [any DatabaseMigration] = [m0001PubSub, m0002Schedules]

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
}
