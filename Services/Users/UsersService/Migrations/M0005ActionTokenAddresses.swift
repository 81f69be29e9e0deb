import PostgresSupport

extension UsersService {
    /// The address an action token was mailed to: a link works only while the user's email is
    /// still that address (a token issued before this migration has none and no longer works).
    static let m0005ActionTokenAddresses = SQLMigration(
        version: 5, name: "record the address of email action tokens",
        statements: ["ALTER TABLE users.action_tokens ADD COLUMN address text"])
}
