import Synchronization

/// Whether a subscription's where clause has run out of its work budget (``MatchBudget``) on an
/// object, which then did not match, and whether that has been logged: once per subscription,
/// not once per event.
final class ClauseBudgetReport: Sendable {
    private let state = Mutex((ranOut: false, logged: false))

    /// Notes that the clause ran out of its budget on an object.
    func ranOut() {
        state.withLock { $0.ranOut = true }
    }

    /// True the first time it is asked after the clause ran out, false ever after.
    func takeFirstReport() -> Bool {
        state.withLock { flags in
            guard flags.ranOut, !flags.logged else { return false }
            flags.logged = true
            return true
        }
    }
}
