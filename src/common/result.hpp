#pragma once
// Expected-style returns for library code: a value or an Error that names
// what went wrong. Exceptions appear only at the D-Bus boundary, where an
// Error becomes an sdbus::Error named org.taskscope.Error.<name>.

#include <string>
#include <utility>
#include <variant>

#include "common/error_names.hpp"

namespace taskscope::common {

/// A failure with a stable name (the last component of the D-Bus error
/// name, e.g. "InvalidSpec") and a message meant for a person.
struct Error {
    std::string name;
    std::string message;

    /// Prefixes the message with what the caller was doing, so an error
    /// carries its path up ("start scope 'x': ...").
    Error context(const std::string& what) const& { return {name, what + ": " + message}; }
    Error context(const std::string& what) && { return {std::move(name), what + ": " + std::move(message)}; }
};

inline Error makeError(std::string name, std::string message) { return {std::move(name), std::move(message)}; }

template <class T>
class [[nodiscard]] Result {
public:
    Result(T value) : v_(std::move(value)) {}
    Result(Error error) : v_(std::move(error)) {}

    bool ok() const { return v_.index() == 0; }
    explicit operator bool() const { return ok(); }
    T& value() & { return std::get<0>(v_); }
    const T& value() const& { return std::get<0>(v_); }
    T&& value() && { return std::get<0>(std::move(v_)); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    const Error& error() const { return std::get<1>(v_); }

private:
    std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
public:
    Result() = default;
    Result(Error error) : error_(std::move(error)), failed_(true) {}

    bool ok() const { return !failed_; }
    explicit operator bool() const { return ok(); }
    const Error& error() const { return error_; }

private:
    Error error_;
    bool failed_ = false;
};

/// errno as an Error with a message like "open /x: No such file or directory".
/// EMFILE and ENFILE are named ResourceExhausted unless the caller names them.
Error errnoError(const std::string& what, int err, const std::string& name = errors::kInternal);

}  // namespace taskscope::common
