#!/bin/sh
# which module-scope variables PyTorch's sm_90 cubins define (issue 33)
L=$(python3 -c "import torch,os;print(os.path.join(os.path.dirname(torch.__file__),'lib'))")
ls -la $L | grep -E "torch_cuda|cublas|cudnn" | head
cd /tmp && mkdir -p elf && cd elf
for lib in $L/libtorch_cuda.so; do
  timeout 40 /usr/local/cuda/bin/cuobjdump -lelf $lib > list.txt 2>&1; echo "list rc $? $(wc -l < list.txt)"
  grep sm_90 list.txt | awk '{print $NF}' | awk 'NR % 40 == 1' | head -40 > pick.txt
  for n in $(cat pick.txt); do timeout 5 /usr/local/cuda/bin/cuobjdump -xelf $n $lib >/dev/null 2>&1; done
done
ls | grep -c cubin
for f in *.cubin; do
  readelf -sW $f 2>/dev/null | awk '$4=="OBJECT" && $7!="UND" {print $7, $8}' > syms.txt
  nv=$(wc -l < syms.txt)
  secs=$(readelf -SW $f 2>/dev/null | grep -oE "\.nv\.(global(\.init)?|constant[1-9])" | sort -u | tr '\n' ' ')
  echo "$f objects=$nv sections: $secs :: $(head -c 300 syms.txt | tr '\n' ' ')"
done | head -60
