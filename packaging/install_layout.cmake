# Where installed files go, decided before the targets exist because `ember` is compiled with the
# path from its own folder to the demo model (so an installed ember finds it under any prefix).
include(GNUInstallDirs)
if(APPLE)
    set(EMBER_BIN_INSTALL_DIR Ember.app/Contents/MacOS)
    set(EMBER_DATA_INSTALL_DIR Ember.app/Contents/Resources)
else()
    set(EMBER_BIN_INSTALL_DIR ${CMAKE_INSTALL_BINDIR})
    set(EMBER_DATA_INSTALL_DIR ${CMAKE_INSTALL_DATADIR}/ember)
endif()
file(RELATIVE_PATH EMBER_DEMO_MODEL_INSTALLED /prefix/${EMBER_BIN_INSTALL_DIR}
     /prefix/${EMBER_DATA_INSTALL_DIR}/models/ember-demo/ember-demo.powerinfer.gguf)
# Likewise the text the app measures a dense model's activation sparsity on.
file(RELATIVE_PATH EMBER_CALIBRATION_TEXT_INSTALLED /prefix/${EMBER_BIN_INSTALL_DIR}
     /prefix/${EMBER_DATA_INSTALL_DIR}/calibration/calibration.txt)
