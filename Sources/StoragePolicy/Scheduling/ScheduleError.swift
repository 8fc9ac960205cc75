// Why a schedule cannot be made: a bad --every or --on value, or a trigger the chosen scheduler cannot
// express. The message always states the forms that would be accepted.

public struct ScheduleError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
