import InternalProtocol
import PostgresSupport

/// A user whose `Users` row is deleted is gone at once, however the row went (a single or bulk
/// delete, a unit of work, a relation cascade, the table dropped): a statement trigger on every
/// app's `Users` table ends the user's sessions, forgets the password and role memberships in
/// the deleting transaction, and announces each user on ``SessionsChannel`` when it commits, so
/// gateways drop cached tokens and real-time connections lose the user's rights.
///
/// The trigger lives with the table (the data catalog creates both); it touches users-service's
/// tables only once that service has created them.
package enum DeletedUsers {
    /// The trigger's name on each `Users` table.
    static let triggerName = "baas_users_deleted"
    /// More users than this deleted at once are announced as the whole app (every cached token
    /// of the app is looked up again) rather than one by one.
    static let announcedOneByOne = 1_000

    /// The trigger function (argument: the app's id), as the catalog migration creates it.
    static let function = """
        CREATE FUNCTION data.users_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
            app text := TG_ARGV[0];
            ids text[];
        BEGIN
            SELECT array_agg("objectId") INTO ids FROM gone;
            IF ids IS NULL THEN RETURN NULL; END IF;
            IF to_regclass('users.sessions') IS NOT NULL THEN
                DELETE FROM users.sessions WHERE app_id = app AND user_id = ANY (ids);
                DELETE FROM users.credentials WHERE app_id = app AND user_id = ANY (ids);
            END IF;
            IF to_regclass('users.user_roles') IS NOT NULL THEN
                DELETE FROM users.user_roles WHERE app_id = app AND user_id = ANY (ids);
            END IF;
            IF cardinality(ids) > \(announcedOneByOne) THEN
                PERFORM pg_notify('\(SessionsChannel.name)', app);
            ELSE
                PERFORM pg_notify('\(SessionsChannel.name)', app || ' ' || id) FROM unnest(ids) AS id;
            END IF;
            RETURN NULL;
        END
        $$
        """

    /// Attaches the trigger to every `Users` table that exists when the migration runs.
    static let attachToExisting = """
        DO $$
        DECLARE t record;
        BEGIN
            FOR t IN SELECT app_id, name FROM data.tables WHERE lower(name) = 'users' AND kind = 'table' LOOP
                EXECUTE format(
                    'CREATE TRIGGER \(triggerName) AFTER DELETE ON %I.%I REFERENCING OLD TABLE AS gone '
                    || 'FOR EACH STATEMENT EXECUTE FUNCTION data.users_deleted(%L)',
                    'app_' || lower(regexp_replace(t.app_id, '[^0-9A-Fa-f]', '', 'g')), t.name, t.app_id);
            END LOOP;
        END
        $$
        """

    /// Attaches the trigger to the app's new table `table` in `schema` when it is `Users`.
    static func attach(table: String, schema: String, appID: String, session: DatabaseSession) async throws {
        guard UsersTableGuard.guards(table) else { return }
        var create = SQL("CREATE TRIGGER \(triggerName) AFTER DELETE ON ")
        create.table(schema, table)
        create.append(" REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION data.users_deleted(")
        // Trigger arguments are literals, never parameters: only an id of hex digits and hyphens is written.
        guard !appID.isEmpty, appID.unicodeScalars.allSatisfy({ $0.isASCII && (Character($0).isHexDigit || $0 == "-") })
        else {
            throw DataError.invalidName(appID)
        }
        create.append("'\(appID)')")
        _ = try await session.rows(create)
    }

    /// Deletes the rows of the app's `Users` table `table` in `schema` (so that the trigger sees
    /// every user go) before the table is dropped; nothing for another table.
    static func deleteAll(table: String, schema: String, session: DatabaseSession) async throws {
        guard UsersTableGuard.guards(table) else { return }
        var delete = SQL("DELETE FROM ")
        delete.table(schema, table)
        _ = try await session.rows(delete)
    }
}
