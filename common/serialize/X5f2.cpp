// SPDX-License-Identifier: BSD-2-Clause
// x5f2 Status builder.
#include "common/serialize/X5f2.h"

#include "schemas/x5f2_generated.h"

namespace efu::serialize {

std::span<const uint8_t> buildX5f2(flatbuffers::FlatBufferBuilder &fbb, const StatusInfo &info,
                                   std::string_view statusJson) {
  fbb.Clear();
  fbb.ForceDefaults(true);
  const auto softwareName = fbb.CreateString(info.softwareName);
  const auto softwareVersion = fbb.CreateString(info.softwareVersion);
  const auto serviceId = fbb.CreateString(info.serviceId);
  const auto hostName = fbb.CreateString(info.hostName);
  const auto json = fbb.CreateString(statusJson.data(), statusJson.size());
  fb::StatusBuilder status(fbb);
  status.add_software_name(softwareName);
  status.add_software_version(softwareVersion);
  status.add_service_id(serviceId);
  status.add_host_name(hostName);
  status.add_process_id(info.processId);
  status.add_update_interval(info.updateIntervalMs);
  status.add_status_json(json);
  fbb.Finish(status.Finish(), fb::StatusIdentifier());
  return {fbb.GetBufferPointer(), fbb.GetSize()};
}

} // namespace efu::serialize
