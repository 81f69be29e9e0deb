import PostgresSupport

extension UsersService {
    /// Whether a session is a guest's (`POST /users/register/guest`): such a caller acts as
    /// `GuestUser` as well as `AuthenticatedUser`, and is not listed users by default.
    static let m0006GuestSessions = SQLMigration(
        version: 6, name: "guest sessions",
        statements: ["ALTER TABLE users.sessions ADD COLUMN guest boolean NOT NULL DEFAULT false"])
}
