#include "app/store/chat_types.h"

#include <array>
#include <utility>

namespace ember::store {
namespace {

constexpr std::array<std::pair<Role, const char*>, 3> kRoles{{
    {Role::System, "system"},
    {Role::User, "user"},
    {Role::Assistant, "assistant"},
}};

constexpr std::array<std::pair<MessageStatus, const char*>, 3> kStatuses{{
    {MessageStatus::Complete, "complete"},
    {MessageStatus::Generating, "generating"},
    {MessageStatus::Interrupted, "interrupted"},
}};

template <typename Enum, std::size_t N>
QString nameOf(const std::array<std::pair<Enum, const char*>, N>& table, Enum value) {
    for (const auto& [entry, name] : table)
        if (entry == value)
            return QString::fromLatin1(name);
    Q_UNREACHABLE();
}

template <typename Enum, std::size_t N>
std::optional<Enum> valueOf(const std::array<std::pair<Enum, const char*>, N>& table, QStringView name) {
    for (const auto& [entry, entryName] : table)
        if (name == QLatin1String(entryName))
            return entry;
    return std::nullopt;
}

}  // namespace

QString roleName(Role role) {
    return nameOf(kRoles, role);
}

std::optional<Role> roleFromName(QStringView name) {
    return valueOf(kRoles, name);
}

QString statusName(MessageStatus status) {
    return nameOf(kStatuses, status);
}

std::optional<MessageStatus> statusFromName(QStringView name) {
    return valueOf(kStatuses, name);
}

}  // namespace ember::store
