// Why a schedule cannot be made: a bad --every or --on value, or a trigger the chosen scheduler cannot
// express. The message always states the forms that would be accepted.

package struct ScheduleError: Error, Sendable, Equatable, CustomStringConvertible {
    package var message: String
    package init(_ message: String) { self.message = message }
    package var description: String { message }
}
