#pragma once
// The Hugging Face token in the system keychain (Secret Service on Linux desktops, Windows'
// Credential Manager, macOS Keychain) through QtKeychain, when Ember is built with it. Jobs are
// asynchronous (the keychain may ask the user to unlock it); each reports once, on the GUI thread.

#include <QObject>
#include <QString>

namespace ember::app {

class TokenKeychain : public QObject {
    Q_OBJECT

public:
    using QObject::QObject;

    // Whether this build has QtKeychain; a desktop without a keychain still fails its jobs.
    static bool built_in();

    void read();
    void write(const QString& token);
    void remove();

signals:
    // token empty and error empty: no token is stored.
    void read_done(const QString& token, const QString& error);
    void write_done(const QString& error);
    void remove_done(const QString& error);
};

}  // namespace ember::app
