/// Catches a reader up with a feed from the store, batch by batch, until no entry is left
/// between what it read and where the feed stands. The feed moves on while a batch is read and
/// delivered (its actor is re-entered at every wait), so where it stands is asked again before
/// each batch. ``ChannelFeed`` and ``DataFeed`` catch a new subscription up with it, and
/// ``DataFeed`` a table whose events could not be delivered; tested in `CatchUpTests`.
struct CatchUp<Position: Comparable & Sendable>: Sendable {
    /// Entries read at most per batch.
    let batch: Int

    /// Delivers every entry after `start` up to the feed's position, in order and once:
    /// `read(from, through)` answers up to ``batch`` entries after `from` and at or before
    /// `through`, in order; `deliver(entries, from)` hands on a batch read after `from`. Answers
    /// the position reached, which the feed's position was not past at the last look (`start`
    /// when it never was past it). An error of `read` or `deliver` ends the catch-up.
    func run<Entry>(
        from start: Position,
        through feedPosition: () -> Position?,
        read: (_ from: Position, _ through: Position) async throws -> [Entry],
        position: (Entry) -> Position,
        deliver: (_ entries: [Entry], _ after: Position) async throws -> Void,
        isolation: isolated (any Actor)? = #isolation
    ) async throws -> Position {
        var from = start
        while let through = feedPosition(), from < through {
            let entries = try await read(from, through)
            try await deliver(entries, from)
            // A full batch may have left entries before `through`.
            from = if entries.count >= batch, let last = entries.last { position(last) } else { through }
        }
        return from
    }
}
