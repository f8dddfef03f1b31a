var wt=Object.defineProperty;var St=(o,t,e)=>t in o?wt(o,t,{enumerable:!0,configurable:!0,writable:!0,value:e}):o[t]=e;var w=(o,t,e)=>St(o,typeof t!="symbol"?t+"":t,e);var D=globalThis,z=D.ShadowRoot&&(D.ShadyCSS===void 0||D.ShadyCSS.nativeShadow)&&"adoptedStyleSheets"in Document.prototype&&"replace"in CSSStyleSheet.prototype,q=Symbol(),it=new WeakMap,k=class{constructor(t,e,s){if(this._$cssResult$=!0,s!==q)throw Error("CSSResult is not constructable. Use `unsafeCSS` or `css` instead.");this.cssText=t,this.t=e}get styleSheet(){let t=this.o,e=this.t;if(z&&t===void 0){let s=e!==void 0&&e.length===1;s&&(t=it.get(e)),t===void 0&&((this.o=t=new CSSStyleSheet).replaceSync(this.cssText),s&&it.set(e,t))}return t}toString(){return this.cssText}},rt=o=>new k(typeof o=="string"?o:o+"",void 0,q),E=(o,...t)=>{let e=o.length===1?o[0]:t.reduce((s,i,r)=>s+(a=>{if(a._$cssResult$===!0)return a.cssText;if(typeof a=="number")return a;throw Error("Value passed to 'css' function must be a 'css' function result: "+a+". Use 'unsafeCSS' to pass non-literal values, but take care to ensure page security.")})(i)+o[r+1],o[0]);return new k(e,o,q)},ot=(o,t)=>{if(z)o.adoptedStyleSheets=t.map(e=>e instanceof CSSStyleSheet?e:e.styleSheet);else for(let e of t){let s=document.createElement("style"),i=D.litNonce;i!==void 0&&s.setAttribute("nonce",i),s.textContent=e.cssText,o.appendChild(s)}},F=z?o=>o:o=>o instanceof CSSStyleSheet?(t=>{let e="";for(let s of t.cssRules)e+=s.cssText;return rt(e)})(o):o;var{is:At,defineProperty:kt,getOwnPropertyDescriptor:Et,getOwnPropertyNames:Ct,getOwnPropertySymbols:Ot,getPrototypeOf:Pt}=Object,I=globalThis,at=I.trustedTypes,Tt=at?at.emptyScript:"",Nt=I.reactiveElementPolyfillSupport,C=(o,t)=>o,V={toAttribute(o,t){switch(t){case Boolean:o=o?Tt:null;break;case Object:case Array:o=o==null?o:JSON.stringify(o)}return o},fromAttribute(o,t){let e=o;switch(t){case Boolean:e=o!==null;break;case Number:e=o===null?null:Number(o);break;case Object:case Array:try{e=JSON.parse(o)}catch{e=null}}return e}},lt=(o,t)=>!At(o,t),nt={attribute:!0,type:String,converter:V,reflect:!1,useDefault:!1,hasChanged:lt};Symbol.metadata??=Symbol("metadata"),I.litPropertyMetadata??=new WeakMap;var $=class extends HTMLElement{static addInitializer(t){this._$Ei(),(this.l??=[]).push(t)}static get observedAttributes(){return this.finalize(),this._$Eh&&[...this._$Eh.keys()]}static createProperty(t,e=nt){if(e.state&&(e.attribute=!1),this._$Ei(),this.prototype.hasOwnProperty(t)&&((e=Object.create(e)).wrapped=!0),this.elementProperties.set(t,e),!e.noAccessor){let s=Symbol(),i=this.getPropertyDescriptor(t,s,e);i!==void 0&&kt(this.prototype,t,i)}}static getPropertyDescriptor(t,e,s){let{get:i,set:r}=Et(this.prototype,t)??{get(){return this[e]},set(a){this[e]=a}};return{get:i,set(a){let c=i?.call(this);r?.call(this,a),this.requestUpdate(t,c,s)},configurable:!0,enumerable:!0}}static getPropertyOptions(t){return this.elementProperties.get(t)??nt}static _$Ei(){if(this.hasOwnProperty(C("elementProperties")))return;let t=Pt(this);t.finalize(),t.l!==void 0&&(this.l=[...t.l]),this.elementProperties=new Map(t.elementProperties)}static finalize(){if(this.hasOwnProperty(C("finalized")))return;if(this.finalized=!0,this._$Ei(),this.hasOwnProperty(C("properties"))){let e=this.properties,s=[...Ct(e),...Ot(e)];for(let i of s)this.createProperty(i,e[i])}let t=this[Symbol.metadata];if(t!==null){let e=litPropertyMetadata.get(t);if(e!==void 0)for(let[s,i]of e)this.elementProperties.set(s,i)}this._$Eh=new Map;for(let[e,s]of this.elementProperties){let i=this._$Eu(e,s);i!==void 0&&this._$Eh.set(i,e)}this.elementStyles=this.finalizeStyles(this.styles)}static finalizeStyles(t){let e=[];if(Array.isArray(t)){let s=new Set(t.flat(1/0).reverse());for(let i of s)e.unshift(F(i))}else t!==void 0&&e.push(F(t));return e}static _$Eu(t,e){let s=e.attribute;return s===!1?void 0:typeof s=="string"?s:typeof t=="string"?t.toLowerCase():void 0}constructor(){super(),this._$Ep=void 0,this.isUpdatePending=!1,this.hasUpdated=!1,this._$Em=null,this._$Ev()}_$Ev(){this._$ES=new Promise(t=>this.enableUpdating=t),this._$AL=new Map,this._$E_(),this.requestUpdate(),this.constructor.l?.forEach(t=>t(this))}addController(t){(this._$EO??=new Set).add(t),this.renderRoot!==void 0&&this.isConnected&&t.hostConnected?.()}removeController(t){this._$EO?.delete(t)}_$E_(){let t=new Map,e=this.constructor.elementProperties;for(let s of e.keys())this.hasOwnProperty(s)&&(t.set(s,this[s]),delete this[s]);t.size>0&&(this._$Ep=t)}createRenderRoot(){let t=this.shadowRoot??this.attachShadow(this.constructor.shadowRootOptions);return ot(t,this.constructor.elementStyles),t}connectedCallback(){this.renderRoot??=this.createRenderRoot(),this.enableUpdating(!0),this._$EO?.forEach(t=>t.hostConnected?.())}enableUpdating(t){}disconnectedCallback(){this._$EO?.forEach(t=>t.hostDisconnected?.())}attributeChangedCallback(t,e,s){this._$AK(t,s)}_$ET(t,e){let s=this.constructor.elementProperties.get(t),i=this.constructor._$Eu(t,s);if(i!==void 0&&s.reflect===!0){let r=(s.converter?.toAttribute!==void 0?s.converter:V).toAttribute(e,s.type);this._$Em=t,r==null?this.removeAttribute(i):this.setAttribute(i,r),this._$Em=null}}_$AK(t,e){let s=this.constructor,i=s._$Eh.get(t);if(i!==void 0&&this._$Em!==i){let r=s.getPropertyOptions(i),a=typeof r.converter=="function"?{fromAttribute:r.converter}:r.converter?.fromAttribute!==void 0?r.converter:V;this._$Em=i;let c=a.fromAttribute(e,r.type);this[i]=c??this._$Ej?.get(i)??c,this._$Em=null}}requestUpdate(t,e,s,i=!1,r){if(t!==void 0){let a=this.constructor;if(i===!1&&(r=this[t]),s??=a.getPropertyOptions(t),!((s.hasChanged??lt)(r,e)||s.useDefault&&s.reflect&&r===this._$Ej?.get(t)&&!this.hasAttribute(a._$Eu(t,s))))return;this.C(t,e,s)}this.isUpdatePending===!1&&(this._$ES=this._$EP())}C(t,e,{useDefault:s,reflect:i,wrapped:r},a){s&&!(this._$Ej??=new Map).has(t)&&(this._$Ej.set(t,a??e??this[t]),r!==!0||a!==void 0)||(this._$AL.has(t)||(this.hasUpdated||s||(e=void 0),this._$AL.set(t,e)),i===!0&&this._$Em!==t&&(this._$Eq??=new Set).add(t))}async _$EP(){this.isUpdatePending=!0;try{await this._$ES}catch(e){Promise.reject(e)}let t=this.scheduleUpdate();return t!=null&&await t,!this.isUpdatePending}scheduleUpdate(){return this.performUpdate()}performUpdate(){if(!this.isUpdatePending)return;if(!this.hasUpdated){if(this.renderRoot??=this.createRenderRoot(),this._$Ep){for(let[i,r]of this._$Ep)this[i]=r;this._$Ep=void 0}let s=this.constructor.elementProperties;if(s.size>0)for(let[i,r]of s){let{wrapped:a}=r,c=this[i];a!==!0||this._$AL.has(i)||c===void 0||this.C(i,void 0,r,c)}}let t=!1,e=this._$AL;try{t=this.shouldUpdate(e),t?(this.willUpdate(e),this._$EO?.forEach(s=>s.hostUpdate?.()),this.update(e)):this._$EM()}catch(s){throw t=!1,this._$EM(),s}t&&this._$AE(e)}willUpdate(t){}_$AE(t){this._$EO?.forEach(e=>e.hostUpdated?.()),this.hasUpdated||(this.hasUpdated=!0,this.firstUpdated(t)),this.updated(t)}_$EM(){this._$AL=new Map,this.isUpdatePending=!1}get updateComplete(){return this.getUpdateComplete()}getUpdateComplete(){return this._$ES}shouldUpdate(t){return!0}update(t){this._$Eq&&=this._$Eq.forEach(e=>this._$ET(e,this[e])),this._$EM()}updated(t){}firstUpdated(t){}};$.elementStyles=[],$.shadowRootOptions={mode:"open"},$[C("elementProperties")]=new Map,$[C("finalized")]=new Map,Nt?.({ReactiveElement:$}),(I.reactiveElementVersions??=[]).push("2.1.2");var X=globalThis,ht=o=>o,L=X.trustedTypes,ct=L?L.createPolicy("lit-html",{createHTML:o=>o}):void 0,$t="$lit$",f=`lit$${Math.random().toFixed(9).slice(2)}$`,mt="?"+f,Ut=`<${mt}>`,v=document,P=()=>v.createComment(""),T=o=>o===null||typeof o!="object"&&typeof o!="function",tt=Array.isArray,Rt=o=>tt(o)||typeof o?.[Symbol.iterator]=="function",G=`[ 	
\f\r]`,O=/<(?:(!--|\/[^a-zA-Z])|(\/?[a-zA-Z][^>\s]*)|(\/?$))/g,dt=/-->/g,pt=/>/g,y=RegExp(`>|${G}(?:([^\\s"'>=/]+)(${G}*=${G}*(?:[^ 	
\f\r"'\`<>=]|("|')|))|$)`,"g"),ut=/'/g,_t=/"/g,ft=/^(?:script|style|textarea|title)$/i,et=o=>(t,...e)=>({_$litType$:o,strings:t,values:e}),n=et(1),Gt=et(2),Kt=et(3),x=Symbol.for("lit-noChange"),l=Symbol.for("lit-nothing"),gt=new WeakMap,b=v.createTreeWalker(v,129);function yt(o,t){if(!tt(o)||!o.hasOwnProperty("raw"))throw Error("invalid template strings array");return ct!==void 0?ct.createHTML(t):t}var Mt=(o,t)=>{let e=o.length-1,s=[],i,r=t===2?"<svg>":t===3?"<math>":"",a=O;for(let c=0;c<e;c++){let h=o[c],p,u,d=-1,g=0;for(;g<h.length&&(a.lastIndex=g,u=a.exec(h),u!==null);)g=a.lastIndex,a===O?u[1]==="!--"?a=dt:u[1]!==void 0?a=pt:u[2]!==void 0?(ft.test(u[2])&&(i=RegExp("</"+u[2],"g")),a=y):u[3]!==void 0&&(a=y):a===y?u[0]===">"?(a=i??O,d=-1):u[1]===void 0?d=-2:(d=a.lastIndex-u[2].length,p=u[1],a=u[3]===void 0?y:u[3]==='"'?_t:ut):a===_t||a===ut?a=y:a===dt||a===pt?a=O:(a=y,i=void 0);let m=a===y&&o[c+1].startsWith("/>")?" ":"";r+=a===O?h+Ut:d>=0?(s.push(p),h.slice(0,d)+$t+h.slice(d)+f+m):h+f+(d===-2?c:m)}return[yt(o,r+(o[e]||"<?>")+(t===2?"</svg>":t===3?"</math>":"")),s]},N=class o{constructor({strings:t,_$litType$:e},s){let i;this.parts=[];let r=0,a=0,c=t.length-1,h=this.parts,[p,u]=Mt(t,e);if(this.el=o.createElement(p,s),b.currentNode=this.el.content,e===2||e===3){let d=this.el.content.firstChild;d.replaceWith(...d.childNodes)}for(;(i=b.nextNode())!==null&&h.length<c;){if(i.nodeType===1){if(i.hasAttributes())for(let d of i.getAttributeNames())if(d.endsWith($t)){let g=u[a++],m=i.getAttribute(d).split(f),H=/([.?@])?(.*)/.exec(g);h.push({type:1,index:r,name:H[2],strings:m,ctor:H[1]==="."?J:H[1]==="?"?Y:H[1]==="@"?Z:A}),i.removeAttribute(d)}else d.startsWith(f)&&(h.push({type:6,index:r}),i.removeAttribute(d));if(ft.test(i.tagName)){let d=i.textContent.split(f),g=d.length-1;if(g>0){i.textContent=L?L.emptyScript:"";for(let m=0;m<g;m++)i.append(d[m],P()),b.nextNode(),h.push({type:2,index:++r});i.append(d[g],P())}}}else if(i.nodeType===8)if(i.data===mt)h.push({type:2,index:r});else{let d=-1;for(;(d=i.data.indexOf(f,d+1))!==-1;)h.push({type:7,index:r}),d+=f.length-1}r++}}static createElement(t,e){let s=v.createElement("template");return s.innerHTML=t,s}};function S(o,t,e=o,s){if(t===x)return t;let i=s!==void 0?e._$Co?.[s]:e._$Cl,r=T(t)?void 0:t._$litDirective$;return i?.constructor!==r&&(i?._$AO?.(!1),r===void 0?i=void 0:(i=new r(o),i._$AT(o,e,s)),s!==void 0?(e._$Co??=[])[s]=i:e._$Cl=i),i!==void 0&&(t=S(o,i._$AS(o,t.values),i,s)),t}var K=class{constructor(t,e){this._$AV=[],this._$AN=void 0,this._$AD=t,this._$AM=e}get parentNode(){return this._$AM.parentNode}get _$AU(){return this._$AM._$AU}u(t){let{el:{content:e},parts:s}=this._$AD,i=(t?.creationScope??v).importNode(e,!0);b.currentNode=i;let r=b.nextNode(),a=0,c=0,h=s[0];for(;h!==void 0;){if(a===h.index){let p;h.type===2?p=new U(r,r.nextSibling,this,t):h.type===1?p=new h.ctor(r,h.name,h.strings,this,t):h.type===6&&(p=new Q(r,this,t)),this._$AV.push(p),h=s[++c]}a!==h?.index&&(r=b.nextNode(),a++)}return b.currentNode=v,i}p(t){let e=0;for(let s of this._$AV)s!==void 0&&(s.strings!==void 0?(s._$AI(t,s,e),e+=s.strings.length-2):s._$AI(t[e])),e++}},U=class o{get _$AU(){return this._$AM?._$AU??this._$Cv}constructor(t,e,s,i){this.type=2,this._$AH=l,this._$AN=void 0,this._$AA=t,this._$AB=e,this._$AM=s,this.options=i,this._$Cv=i?.isConnected??!0}get parentNode(){let t=this._$AA.parentNode,e=this._$AM;return e!==void 0&&t?.nodeType===11&&(t=e.parentNode),t}get startNode(){return this._$AA}get endNode(){return this._$AB}_$AI(t,e=this){t=S(this,t,e),T(t)?t===l||t==null||t===""?(this._$AH!==l&&this._$AR(),this._$AH=l):t!==this._$AH&&t!==x&&this._(t):t._$litType$!==void 0?this.$(t):t.nodeType!==void 0?this.T(t):Rt(t)?this.k(t):this._(t)}O(t){return this._$AA.parentNode.insertBefore(t,this._$AB)}T(t){this._$AH!==t&&(this._$AR(),this._$AH=this.O(t))}_(t){this._$AH!==l&&T(this._$AH)?this._$AA.nextSibling.data=t:this.T(v.createTextNode(t)),this._$AH=t}$(t){let{values:e,_$litType$:s}=t,i=typeof s=="number"?this._$AC(t):(s.el===void 0&&(s.el=N.createElement(yt(s.h,s.h[0]),this.options)),s);if(this._$AH?._$AD===i)this._$AH.p(e);else{let r=new K(i,this),a=r.u(this.options);r.p(e),this.T(a),this._$AH=r}}_$AC(t){let e=gt.get(t.strings);return e===void 0&&gt.set(t.strings,e=new N(t)),e}k(t){tt(this._$AH)||(this._$AH=[],this._$AR());let e=this._$AH,s,i=0;for(let r of t)i===e.length?e.push(s=new o(this.O(P()),this.O(P()),this,this.options)):s=e[i],s._$AI(r),i++;i<e.length&&(this._$AR(s&&s._$AB.nextSibling,i),e.length=i)}_$AR(t=this._$AA.nextSibling,e){for(this._$AP?.(!1,!0,e);t!==this._$AB;){let s=ht(t).nextSibling;ht(t).remove(),t=s}}setConnected(t){this._$AM===void 0&&(this._$Cv=t,this._$AP?.(t))}},A=class{get tagName(){return this.element.tagName}get _$AU(){return this._$AM._$AU}constructor(t,e,s,i,r){this.type=1,this._$AH=l,this._$AN=void 0,this.element=t,this.name=e,this._$AM=i,this.options=r,s.length>2||s[0]!==""||s[1]!==""?(this._$AH=Array(s.length-1).fill(new String),this.strings=s):this._$AH=l}_$AI(t,e=this,s,i){let r=this.strings,a=!1;if(r===void 0)t=S(this,t,e,0),a=!T(t)||t!==this._$AH&&t!==x,a&&(this._$AH=t);else{let c=t,h,p;for(t=r[0],h=0;h<r.length-1;h++)p=S(this,c[s+h],e,h),p===x&&(p=this._$AH[h]),a||=!T(p)||p!==this._$AH[h],p===l?t=l:t!==l&&(t+=(p??"")+r[h+1]),this._$AH[h]=p}a&&!i&&this.j(t)}j(t){t===l?this.element.removeAttribute(this.name):this.element.setAttribute(this.name,t??"")}},J=class extends A{constructor(){super(...arguments),this.type=3}j(t){this.element[this.name]=t===l?void 0:t}},Y=class extends A{constructor(){super(...arguments),this.type=4}j(t){this.element.toggleAttribute(this.name,!!t&&t!==l)}},Z=class extends A{constructor(t,e,s,i,r){super(t,e,s,i,r),this.type=5}_$AI(t,e=this){if((t=S(this,t,e,0)??l)===x)return;let s=this._$AH,i=t===l&&s!==l||t.capture!==s.capture||t.once!==s.once||t.passive!==s.passive,r=t!==l&&(s===l||i);i&&this.element.removeEventListener(this.name,this,s),r&&this.element.addEventListener(this.name,this,t),this._$AH=t}handleEvent(t){typeof this._$AH=="function"?this._$AH.call(this.options?.host??this.element,t):this._$AH.handleEvent(t)}},Q=class{constructor(t,e,s){this.element=t,this.type=6,this._$AN=void 0,this._$AM=e,this.options=s}get _$AU(){return this._$AM._$AU}_$AI(t){S(this,t)}};var Ht=X.litHtmlPolyfillSupport;Ht?.(N,U),(X.litHtmlVersions??=[]).push("3.3.3");var bt=(o,t,e)=>{let s=e?.renderBefore??t,i=s._$litPart$;if(i===void 0){let r=e?.renderBefore??null;s._$litPart$=i=new U(t.insertBefore(P(),r),r,void 0,e??{})}return i._$AI(o),i};var st=globalThis,_=class extends ${constructor(){super(...arguments),this.renderOptions={host:this},this._$Do=void 0}createRenderRoot(){let t=super.createRenderRoot();return this.renderOptions.renderBefore??=t.firstChild,t}update(t){let e=this.render();this.hasUpdated||(this.renderOptions.isConnected=this.isConnected),super.update(t),this._$Do=bt(e,this.renderRoot,this.renderOptions)}connectedCallback(){super.connectedCallback(),this._$Do?.setConnected(!0)}disconnectedCallback(){super.disconnectedCallback(),this._$Do?.setConnected(!1)}render(){return x}};_._$litElement$=!0,_.finalized=!0,st.litElementHydrateSupport?.({LitElement:_});var Dt=st.litElementPolyfillSupport;Dt?.({LitElement:_});(st.litElementVersions??=[]).push("4.2.2");var W={en:{title:"Memory",menu:"Menu",search:"Search memories",searchHint:"Type to search by words and meaning",everyone:"Everyone I may see",household:"Household",status:"Status",active:"Active",expiring:"Expiring",archived:"Forgotten",superseded:"Replaced",any:"Any",order:"Order",relevance:"Best match",newest:"Newest",recalled:"Most recalled",owner:"Whose",shown:"{shown} of {total}",more:"Show more",none:"No memories here yet.",loading:"Loading\u2026",close:"Close",add:"Add",edit:"Edit",save:"Save",cancel:"Cancel",text:"Text",overview:"Overview",health:"Database {size} MB \xB7 search by {search} \xB7 {waiting} conversations waiting for digestion \xB7 AI Task {calls} of {cap} calls in the last hour",keywordOnly:"keywords only",profiles:"Profiles",noProfiles:"No profile written yet.",refresh:"Refresh now",forget:"Forget",restore:"Restore",purge:"Erase for good",purgeConfirm:"Erase this memory for good? Its text, its vectors and every copy in the database and the exports are removed; it cannot be restored.",created:"Created",updated:"Updated",expires:"Expires",recalledTimes:"Recalled",lastRecalled:"Last recalled",never:"never",type:"Type",tags:"Tags",origin:"Came from",conversation:"Conversation",replaced:"It replaced",replacedBy:"Replaced by",error:"Something went wrong: {error}",memories:"Memories",conversations:"Conversations",type_fact:"Fact",type_preference:"Preference",type_instruction:"Instruction",type_event:"Event",type_summary:"Summary",type_profile:"Profile",type_other:"Other",origin_tool:"Said to the assistant",origin_digestion:"Digested from a conversation",origin_action:"Added by hand or an action",origin_import:"Imported",filters:"Filters ({count})",tag:"Tag",tagHint:"any tag",from:"From",to:"To",select:"Select memory #{id}",selected:"{count} selected",clearSelection:"Clear selection",purgeManyConfirm:"Erase these {count} memories for good? Their texts, vectors and every copy in the database and the exports are removed; they cannot be restored.",openConversation:"open the conversation",embedding:"Meaning search: {provider} {model}, {state}, {progress}% embedded ({pending} waiting)",connected:"answering",unreachable:"not answering (keyword search meanwhile)",digestion:"Digestion",state_waiting:"Waiting",state_done:"Digested",state_skipped:"Skipped",state_failed:"Failed",reason_empty:"nothing was said",reason_too_short:"too short",reason_device_commands:"only device commands",reason_agent_opted_out:"this agent is left out in the options",reason_device_opted_out:"this device is left out in the options",reason_timeout:"the AI Task did not answer in time",reason_malformed:"the AI Task's answer was not usable",reason_unavailable:"no AI Task entity is available",reason_rate_limited:"the hourly AI Task budget is used up",reason_store:"the database could not be written",conversationsShown:"{shown} of {total} conversations",noConversations:"No conversations captured yet.",conversationLabel:"{time}, {speaker}: {preview}",noWords:"(no words)",messagesCount:"{count} messages",producedCount:"{count} memories",conversation:"Conversation",speaker:"Who spoke",agent:"Agent",device:"Device",started:"Started",retryAt:"Next try",role_assistant:"Assistant",role_tool_result:"Tool",gave:"What it gave",gaveNothing:"No memory came from it (yet).",digestNow:"Digest now",digesting:"Digesting\u2026",eraseConversation:"Erase the conversation",eraseConversationConfirm:"Erase this conversation for good? Its messages are removed from the database, its search index and its vectors; they cannot be brought back. The memories it gave stay (forget them on their own)."}};function vt(o){return o in W.en}function B(o,t,e={}){let i=(W[o?.split("-")[0]]??W.en)[t]??W.en[t]??t;for(let[r,a]of Object.entries(e))i=i.replace(`{${r}}`,String(a));return i}var j=E`
    :host {
      display: block;
      min-height: 100vh;
      background: var(--primary-background-color);
      color: var(--primary-text-color);
      font-family: var(--paper-font-body1_-_font-family, var(--ha-font-family-body, sans-serif));
    }
    header {
      display: flex;
      flex-wrap: wrap;
      gap: 12px;
      align-items: center;
      padding: 12px 16px;
      background: var(--app-header-background-color, var(--primary-color));
      color: var(--app-header-text-color, var(--text-primary-color));
    }
    .menu {
      border: none;
      background: transparent;
      color: inherit;
      font-size: 22px;
      cursor: pointer;
      padding: 4px 8px;
    }
    h1 {
      margin: 0;
      font-size: 20px;
      font-weight: 400;
      flex: 0 0 auto;
    }
    input[type="search"] {
      flex: 1 1 240px;
      min-width: 0;
      padding: 8px 12px;
      border-radius: 8px;
      border: 1px solid var(--divider-color);
      background: var(--card-background-color);
      color: var(--primary-text-color);
      font-size: 16px;
    }
    [hidden] {
      display: none !important;
    }
    .filters {
      display: flex;
      flex-wrap: wrap;
      gap: 8px;
    }
    label {
      display: flex;
      flex-direction: column;
      font-size: 12px;
    }
    select {
      padding: 6px;
      border-radius: 6px;
      border: 1px solid var(--divider-color);
      background: var(--card-background-color);
      color: var(--primary-text-color);
    }
    main {
      padding: 8px 16px 32px;
      max-width: 960px;
      margin: 0 auto;
    }
    .count {
      color: var(--secondary-text-color);
      font-size: 14px;
    }
    .list {
      list-style: none;
      margin: 0;
      padding: 0;
      display: grid;
      gap: 8px;
    }
    .memory {
      width: 100%;
      text-align: start;
      display: flex;
      flex-direction: column;
      gap: 6px;
      padding: 12px;
      border-radius: 12px;
      border: 1px solid var(--divider-color);
      background: var(--card-background-color);
      color: var(--primary-text-color);
      font: inherit;
      cursor: pointer;
    }
    .memory:focus-visible,
    button:focus-visible,
    select:focus-visible,
    input:focus-visible {
      outline: 2px solid var(--primary-color);
      outline-offset: 2px;
    }
    .memory.archived,
    .memory.superseded {
      opacity: 0.7;
    }
    .content {
      overflow-wrap: anywhere;
    }
    .meta {
      display: flex;
      flex-wrap: wrap;
      gap: 8px;
      font-size: 12px;
      color: var(--secondary-text-color);
    }
    .chip {
      padding: 0 8px;
      border-radius: 10px;
      background: var(--secondary-background-color);
    }
    .chip.person {
      background: var(--primary-color);
      color: var(--text-primary-color);
    }
    .more,
    .actions button {
      margin-top: 12px;
      padding: 8px 16px;
      border-radius: 8px;
      border: 1px solid var(--primary-color);
      background: transparent;
      color: var(--primary-color);
      font: inherit;
      cursor: pointer;
    }
    .actions button.danger {
      border-color: var(--error-color);
      color: var(--error-color);
    }
    .error {
      margin: 8px 16px;
      color: var(--error-color);
    }
    .detail {
      position: fixed;
      inset: auto 0 0 auto;
      top: 0;
      width: min(420px, 100vw);
      overflow-y: auto;
      background: var(--card-background-color);
      color: var(--primary-text-color);
      border-inline-start: 1px solid var(--divider-color);
      box-shadow: var(--ha-card-box-shadow, 0 0 12px rgba(0, 0, 0, 0.3));
      padding-bottom: 24px;
    }
    .detail header {
      justify-content: space-between;
    }
    .detail header button {
      border: none;
      background: transparent;
      color: inherit;
      font-size: 20px;
      cursor: pointer;
    }
    .detail h2 {
      margin: 0;
      font-size: 18px;
      font-weight: 400;
    }
    .full,
    .detail dl,
    .detail h3,
    .chain,
    .actions {
      margin-inline: 16px;
    }
    .full {
      font-size: 16px;
      overflow-wrap: anywhere;
    }
    dl {
      display: grid;
      grid-template-columns: max-content 1fr;
      gap: 4px 12px;
      font-size: 14px;
    }
    dt {
      color: var(--secondary-text-color);
    }
    dd {
      margin: 0;
      overflow-wrap: anywhere;
    }
    .link {
      border: none;
      background: none;
      color: var(--primary-color);
      text-align: start;
      font: inherit;
      cursor: pointer;
      padding: 2px 0;
    }
    .overview {
      margin: 8px 0;
      padding: 8px 12px;
      border-radius: 12px;
      border: 1px solid var(--divider-color);
      background: var(--card-background-color);
    }
    .overview summary {
      cursor: pointer;
      display: flex;
      flex-wrap: wrap;
      gap: 6px;
      align-items: center;
    }
    .health {
      font-size: 13px;
      color: var(--secondary-text-color);
    }
    .profiles {
      list-style: none;
      padding: 0;
      display: grid;
      gap: 6px;
    }
    .profiles li {
      display: flex;
      flex-wrap: wrap;
      gap: 8px;
      align-items: baseline;
    }
    .editor {
      display: grid;
      gap: 8px;
      margin: 12px 16px;
    }
    .editor label {
      font-size: 14px;
    }
    textarea,
    .editor input {
      font: inherit;
      padding: 6px;
      border-radius: 6px;
      border: 1px solid var(--divider-color);
      background: var(--card-background-color);
      color: var(--primary-text-color);
    }
    .add {
      padding: 6px 14px;
      border-radius: 8px;
      border: 1px solid currentColor;
      background: transparent;
      color: inherit;
      font: inherit;
      cursor: pointer;
    }
    .actions {
      display: flex;
      flex-wrap: wrap;
      gap: 8px;
    }

    .tabs {
      display: flex;
      gap: 4px;
      flex: 1 0 100%;
    }
    .tabs button {
      padding: 6px 14px;
      border: none;
      border-bottom: 2px solid transparent;
      background: transparent;
      color: inherit;
      font: inherit;
      cursor: pointer;
      opacity: 0.8;
    }
    .tabs button[aria-selected="true"] {
      border-bottom-color: currentColor;
      opacity: 1;
    }
    .row {
      display: flex;
      gap: 8px;
      align-items: stretch;
    }
    .row input[type="checkbox"] {
      width: 20px;
      height: 20px;
      margin: 14px 0 0;
      flex: 0 0 auto;
      accent-color: var(--primary-color);
    }
    .bulk {
      position: sticky;
      top: 0;
      z-index: 1;
      display: flex;
      flex-wrap: wrap;
      gap: 8px;
      align-items: center;
      padding: 8px 12px;
      border-radius: 12px;
      background: var(--secondary-background-color);
    }
    .bulk button {
      margin: 0;
    }
    .filters input {
      padding: 6px;
      border-radius: 6px;
      border: 1px solid var(--divider-color);
      background: var(--card-background-color);
      color: var(--primary-text-color);
      font: inherit;
      font-size: 14px;
      max-width: 150px;
    }
    .day {
      font-size: 14px;
      font-weight: 500;
      color: var(--secondary-text-color);
      margin: 16px 0 8px;
    }
    .state.failed {
      background: var(--error-color);
      color: var(--text-primary-color);
    }
    .state.done {
      background: var(--success-color, #43a047);
      color: var(--text-primary-color);
    }
    .state.waiting {
      background: var(--warning-color, #ffa600);
      color: var(--text-primary-color);
    }
    .messages {
      list-style: none;
      margin: 12px 16px;
      padding: 0;
      display: grid;
      gap: 6px;
    }
    .message {
      padding: 8px 10px;
      border-radius: 10px;
      background: var(--secondary-background-color);
      display: grid;
      gap: 2px;
      overflow-wrap: anywhere;
    }
    .message.user {
      background: var(--card-background-color);
      border: 1px solid var(--divider-color);
    }
    .message.tool_result {
      font-size: 12px;
      opacity: 0.8;
    }
    .message.at {
      outline: 2px solid var(--primary-color);
    }
    .message .who {
      font-size: 12px;
      color: var(--secondary-text-color);
    }
    .actions button:disabled {
      opacity: 0.6;
      cursor: progress;
    }
`;var zt=50,R=class extends _{constructor(){super(),this._items=[],this._total=0,this._cursor=null,this._status="",this._open=null,this._busy=!1,this._error="",this._loading=!1,this._asked=0}t(t,e){return B(this.hass?.locale?.language??this.hass?.language,t,e)}_fail(t){this._error=t?.message??String(t)}firstUpdated(){this.reload()}reload(){this._load(!1),this._open&&this._reopen()}async _load(t){let e=++this._asked,s={type:"memory/conversations",limit:zt};this._status&&(s.statuses=[this._status]),t&&this._cursor&&(s.cursor=this._cursor),this._loading=!0;try{let i=await this.hass.callWS(s);if(e!==this._asked)return;this._items=t?[...this._items,...i.conversations]:i.conversations,this._total=i.total,this._cursor=i.cursor,this._error=""}catch(i){e===this._asked&&this._fail(i)}finally{e===this._asked&&(this._loading=!1)}}async show(t){try{this._open=await this.hass.callWS({type:"memory/conversation",...t}),this._error="",await this.updateComplete;let e=this.renderRoot.querySelector(".message.at");e?.scrollIntoView({block:"center"}),e?.focus()}catch(e){this._fail(e)}}async _reopen(){try{this._open=await this.hass.callWS({type:"memory/conversation",conversation:this._open.conversation.id})}catch{this._open=null}}async _digest(){this._busy=!0;try{await this.hass.callWS({type:"memory/digest_conversation",conversation:this._open.conversation.id}),await this._reopen(),await this._load(!1)}catch(t){this._fail(t)}finally{this._busy=!1}}async _erase(){if(window.confirm(this.t("eraseConversationConfirm")))try{await this.hass.callWS({type:"memory/erase_conversation",conversation:this._open.conversation.id}),this._open=null,await this._load(!1)}catch(t){this._fail(t)}}_openMemory(t){this.dispatchEvent(new CustomEvent("open-memory",{detail:{id:t},bubbles:!0,composed:!0}))}_day(t){return new Date(t).toLocaleDateString(this.hass?.locale?.language??void 0,{weekday:"long",year:"numeric",month:"long",day:"numeric"})}_time(t){return new Date(t).toLocaleTimeString(this.hass?.locale?.language??void 0,{hour:"2-digit",minute:"2-digit"})}_state(t){let e=t.reason,s=e?vt(`reason_${e}`)?this.t(`reason_${e}`):e:"",i=s?`${this.t(`state_${t.status}`)}: ${s}`:this.t(`state_${t.status}`);return n`<span class="chip state ${t.status}">${i}</span>`}render(){if(!this.hass)return l;let t=[];for(let e of this._items){let s=this._day(e.started_at);(!t.length||t.at(-1).day!==s)&&t.push({day:s,items:[]}),t.at(-1).items.push(e)}return n`
      <div class="filters conversation-filters">
        <label>
          <span>${this.t("digestion")}</span>
          <select
            @change=${e=>{this._status=e.target.value,this._load(!1)}}
          >
            <option value="">${this.t("any")}</option>
            ${["waiting","done","skipped","failed"].map(e=>n`<option value=${e}>${this.t(`state_${e}`)}</option>`)}
          </select>
        </label>
      </div>
      ${this._error?n`<p class="error" role="alert">${this.t("error",{error:this._error})}</p>`:l}
      <p class="count" aria-live="polite">
        ${this._loading&&!this._items.length?this.t("loading"):this._items.length?this.t("conversationsShown",{shown:this._items.length,total:this._total}):this.t("noConversations")}
      </p>
      ${t.map(({day:e,items:s})=>n`<h3 class="day">${e}</h3>
          <ul class="list">
            ${s.map(i=>this._row(i))}
          </ul>`)}
      ${this._cursor?n`<button class="more" @click=${()=>this._load(!0)}>${this.t("more")}</button>`:l}
      ${this._open?this._detail(this._open):l}
    `}_row(t){return n`<li>
      <button
        class="memory"
        @click=${()=>this.show({conversation:t.id})}
        aria-label=${this.t("conversationLabel",{time:this._time(t.started_at),speaker:t.speaker,preview:t.preview})}
      >
        <span class="content">${t.preview||this.t("noWords")}</span>
        <span class="meta">
          <span>${this._time(t.started_at)}</span>
          <span class="chip ${t.scope==="household"?"house":"person"}">${t.speaker}</span>
          ${t.agent?n`<span>${t.agent}</span>`:l}
          ${t.device?n`<span>${t.device}</span>`:l}
          ${this._state(t)}
          <span>${this.t("messagesCount",{count:t.messages})}</span>
          ${t.produced?n`<span>${this.t("producedCount",{count:t.produced})}</span>`:l}
        </span>
      </button>
    </li>`}_detail({conversation:t,messages:e,memories:s,message_id:i}){let r=(a,c)=>n`<dt>${a}</dt><dd>${c}</dd>`;return n`<section class="detail" role="dialog" aria-label=${this.t("conversation")}>
      <header>
        <h2>${this.t("conversation")}</h2>
        <button @click=${()=>this._open=null} aria-label=${this.t("close")}>✕</button>
      </header>
      <dl>
        ${r(this.t("speaker"),t.speaker)}
        ${t.agent?r(this.t("agent"),t.agent):l}
        ${t.device?r(this.t("device"),t.device):l}
        ${r(this.t("started"),`${this._day(t.started_at)} ${this._time(t.started_at)}`)}
        ${r(this.t("digestion"),this._state(t))}
        ${t.retry_at?r(this.t("retryAt"),`${this._day(t.retry_at)} ${this._time(t.retry_at)}`):l}
      </dl>
      <ol class="messages">
        ${e.map(a=>n`<li
            class="message ${a.role} ${a.id===i?"at":""}"
            tabindex=${a.id===i?"0":"-1"}
            aria-current=${a.id===i?"true":"false"}
          >
            <span class="who">${a.role==="user"?a.speaker:this.t(`role_${a.role}`)}</span>
            <span class="said">${a.content||(a.tool_name?`(${a.tool_name})`:"")}</span>
          </li>`)}
      </ol>
      <h3>${this.t("gave")}</h3>
      ${s.length?n`<ul class="chain">
            ${s.map(a=>n`<li>
                <button class="link" @click=${()=>this._openMemory(a.id)}>#${a.id} ${a.content}</button>
              </li>`)}
          </ul>`:n`<p class="count chain">${this.t("gaveNothing")}</p>`}
      <div class="actions">
        <button @click=${this._digest} ?disabled=${this._busy}>${this._busy?this.t("digesting"):this.t("digestNow")}</button>
        <button class="danger" @click=${this._erase}>${this.t("eraseConversation")}</button>
      </div>
    </section>`}};w(R,"properties",{hass:{attribute:!1},narrow:{type:Boolean},_items:{state:!0},_total:{state:!0},_cursor:{state:!0},_status:{state:!0},_open:{state:!0},_busy:{state:!0},_error:{state:!0},_loading:{state:!0}}),w(R,"styles",[j,E`
      :host {
        min-height: 0;
        background: transparent;
      }
    `]);customElements.get("memory-conversations")||customElements.define("memory-conversations",R);var It=50,Lt=250,xt=["fact","preference","instruction","event","summary","profile","other"],Wt=["tool","digestion","action","import"],M=class extends _{constructor(){super(),this._memories=[],this._total=0,this._cursor=null,this._query="",this._person="",this._status="active",this._order="newest",this._open=null,this._loading=!1,this._error="",this._editing=null,this._overview=null,this._view="memories",this._type="",this._tag="",this._origin="",this._since="",this._until="",this._selected=new Set,this._filtersOpen=!1,this._asked=0,this._typing=void 0,this._unsubscribe=void 0}t(t,e){return B(this.hass?.locale?.language??this.hass?.language,t,e)}connectedCallback(){super.connectedCallback(),this.hass&&this._start()}disconnectedCallback(){super.disconnectedCallback(),this._unsubscribe?.then(t=>t()).catch(()=>{}),this._unsubscribe=void 0}updated(t){t.has("hass")&&this.hass&&!this._unsubscribe&&this._start()}_start(){this._unsubscribe=this.hass.connection.subscribeMessage(()=>{this._load(!1),this._loadOverview(),this.renderRoot.querySelector("memory-conversations")?.reload()},{type:"memory/subscribe"}),this._load(!1),this._loadOverview()}async _loadOverview(){try{this._overview=await this.hass.callWS({type:"memory/overview"})}catch(t){this._error=t?.message??String(t)}}async _refreshProfile(t){try{await this.hass.callWS({type:"memory/refresh_profile",person:t.household?"household":t.scope}),await this._loadOverview()}catch(e){this._error=e?.message??String(e)}}_overviewPart(){let t=this._overview;if(!t)return l;let{counts:e,health:s,profiles:i}=t,r=(s.database_bytes/1048576).toFixed(1);return n`<details class="overview">
      <summary>
        ${this.t("overview")}:
        ${["active","expiring","archived","superseded"].map(a=>n`<span class="chip">${this.t(a)} ${e[a]}</span>`)}
      </summary>
      <p class="health">
        ${this.t("health",{size:r,search:s.model??this.t("keywordOnly"),waiting:s.digestion_waiting,calls:s.ai_task_calls_last_hour,cap:s.ai_task_max_calls_per_hour})}
        ${s.embedding?n`<br />${this.t("embedding",{provider:s.embedding.provider,model:s.embedding.model,progress:Math.round(s.embedding.progress),pending:s.embedding.pending,state:this.t(s.embedding.connected?"connected":"unreachable")})}`:l}
      </p>
      <h3>${this.t("profiles")}</h3>
      ${i.length?n`<ul class="profiles">
            ${i.map(a=>n`<li>
                <span class="chip ${a.household?"house":"person"}">${a.owner}</span>
                <span class="content">${a.content}</span>
                <button class="link" @click=${()=>this._refreshProfile(a)}>
                  ${this.t("refresh")}
                </button>
              </li>`)}
          </ul>`:n`<p class="count">${this.t("noProfiles")}</p>`}
    </details>`}async _load(t){let e=++this._asked,s={type:"memory/browse",status:this._status,limit:It,order:this._query.trim()?"relevance":this._order};if(this._query.trim()&&(s.query=this._query.trim()),this._person&&(s.person=this._person),this._type&&(s.types=[this._type]),this._tag.trim()&&(s.tags=[this._tag.trim()]),this._origin&&(s.origins=[this._origin]),this._since&&(s.since=new Date(`${this._since}T00:00`).toISOString()),this._until){let i=new Date(`${this._until}T00:00`);i.setDate(i.getDate()+1),s.until=i.toISOString()}t&&this._cursor&&(s.cursor=this._cursor),this._loading=!0;try{let i=await this.hass.callWS(s);if(e!==this._asked)return;this._memories=t?[...this._memories,...i.memories]:i.memories,t||(this._selected=new Set),this._total=i.total,this._cursor=i.cursor,this._error=""}catch(i){e===this._asked&&(this._error=i?.message??String(i))}finally{e===this._asked&&(this._loading=!1)}}_menu(){this.dispatchEvent(new Event("hass-toggle-menu",{bubbles:!0,composed:!0}))}_typed(t){this._query=t.target.value,clearTimeout(this._typing),this._typing=setTimeout(()=>this._load(!1),Lt)}_chose(t,e){this[t]=e.target.value,this._load(!1)}async _show(t){try{this._open=await this.hass.callWS({type:"memory/get",memory_id:t}),this._error=""}catch(e){this._error=e?.message??String(e)}}async _act(t,e,s=!1){if(!(s&&!window.confirm(this.t("purgeConfirm"))))try{let i={type:t,memory_ids:[e]};s&&(i.purge=!0),await this.hass.callWS(i),s?this._open=null:await this._show(e),await this._load(!1)}catch(i){this._error=i?.message??String(i)}}async _actOnSelected(t,e=!1){let s=[...this._selected];if(s.length&&!(e&&!window.confirm(this.t("purgeManyConfirm",{count:s.length}))))try{let i={type:t,memory_ids:s};e&&(i.purge=!0),await this.hass.callWS(i),this._selected=new Set,this._open&&s.includes(this._open.memory.id)&&(this._open=null),await this._load(!1)}catch(i){this._error=i?.message??String(i)}}_toggle(t,e){let s=new Set(this._selected);e.target.checked?s.add(t):s.delete(t),this._selected=s}async _openConversation(t){this._open=null,this._editing=null,this._view="conversations",await this.updateComplete,await this.renderRoot.querySelector("memory-conversations")?.show({memory_id:t})}_openMemory(t){this._view="memories",this._show(t.detail.id)}_edit(t){this._editing=t?{id:t.id,content:t.content,memory_type:t.type,tags:t.tags.join(", "),person:t.household?"household":t.scope,expires_at:t.expires_at?t.expires_at.slice(0,16):""}:{content:"",memory_type:"fact",tags:"",person:"household",expires_at:""}}async _save(t){t.preventDefault();let e=new FormData(t.target),s=String(e.get("tags")??"").split(",").map(c=>c.trim()).filter(Boolean),i=String(e.get("expires_at")??""),r=String(e.get("person")),a={content:String(e.get("content")??""),memory_type:String(e.get("memory_type")),tags:s};try{let c;this._editing.id?c=(await this.hass.callWS({...a,type:"memory/update",memory_id:this._editing.id,person:r,expires_at:i?new Date(i).toISOString():null})).memory.id:(r!=="household"&&(a.person=r),i&&(a.expires_at=new Date(i).toISOString()),c=(await this.hass.callWS({...a,type:"memory/add"})).id),this._editing=null,await this._show(c),await this._load(!1)}catch(c){this._error=c?.message??String(c)}}_editor(){let t=this._editing,e=xt.filter(s=>s!=="profile");return n`<form class="editor" @submit=${this._save} aria-label=${t.id?this.t("edit"):this.t("add")}>
      <label>
        <span>${this.t("text")}</span>
        <textarea name="content" required rows="3" .value=${t.content}></textarea>
      </label>
      <label>
        <span>${this.t("type")}</span>
        <select name="memory_type">
          ${e.map(s=>n`<option value=${s} ?selected=${s===t.memory_type}>${s}</option>`)}
        </select>
      </label>
      <label>
        <span>${this.t("tags")}</span>
        <input name="tags" .value=${t.tags} />
      </label>
      <label>
        <span>${this.t("owner")}</span>
        <select name="person">
          <option value="household" ?selected=${t.person==="household"}>${this.t("household")}</option>
          ${this._persons().map(s=>n`<option value=${s.id} ?selected=${s.id===t.person}>${s.name}</option>`)}
        </select>
      </label>
      <label>
        <span>${this.t("expires")}</span>
        <input name="expires_at" type="datetime-local" .value=${t.expires_at} />
      </label>
      <div class="actions">
        <button type="submit">${this.t("save")}</button>
        <button type="button" @click=${()=>this._editing=null}>${this.t("cancel")}</button>
      </div>
    </form>`}_persons(){return Object.values(this.hass?.states??{}).filter(t=>t.entity_id.startsWith("person.")).map(t=>({id:t.entity_id,name:t.attributes.friendly_name??t.entity_id}))}_date(t){return t?new Date(t).toLocaleString(this.hass?.locale?.language??void 0):this.t("never")}render(){if(!this.hass)return l;let t=this._view==="memories";return n`
      <header class=${this.narrow?"narrow":""}>
        ${this.narrow?n`<button class="menu" @click=${this._menu} aria-label=${this.t("menu")}>☰</button>`:l}
        <h1>${this.t("title")}</h1>
        <button class="add" @click=${()=>this._edit(null)}>${this.t("add")}</button>
        <div class="tabs" role="tablist">
          ${["memories","conversations"].map(e=>n`<button
              role="tab"
              aria-selected=${this._view===e?"true":"false"}
              @click=${()=>this._view=e}
            >
              ${this.t(e)}
            </button>`)}
        </div>
        ${t?this._searchAndFilters():l}
      </header>
      ${this._error?n`<p class="error" role="alert">${this.t("error",{error:this._error})}</p>`:l}
      <main>
        ${this._overviewPart()}
        ${t?this._memoryList():n`<memory-conversations
              .hass=${this.hass}
              .narrow=${this.narrow}
              @open-memory=${this._openMemory}
            ></memory-conversations>`}
      </main>
      ${this._open?this._detail(this._open):l}
      ${this._editing&&!this._editing.id?n`<section class="detail" role="dialog" aria-label=${this.t("add")}>
            <header><h2>${this.t("add")}</h2></header>
            ${this._editor()}
          </section>`:l}
    `}_select(t,e,s,i=t){return n`<label>
      <span>${t}</span>
      <select @change=${r=>this._chose(e,r)} aria-label=${i}>
        ${s.map(([r,a])=>n`<option value=${r} ?selected=${r===this[e]}>${a}</option>`)}
      </select>
    </label>`}_searchAndFilters(){return n`<input
        type="search"
        .value=${this._query}
        @input=${this._typed}
        placeholder=${this.t("searchHint")}
        aria-label=${this.t("search")}
      />
      ${this.narrow?n`<button
            class="add"
            aria-expanded=${this._filtersOpen?"true":"false"}
            @click=${()=>this._filtersOpen=!this._filtersOpen}
          >
            ${this.t("filters",{count:this._activeFilters()})}
          </button>`:l}
      <div class="filters" ?hidden=${this.narrow&&!this._filtersOpen}>
        ${this._select(this.t("owner"),"_person",[["",this.t("everyone")],["household",this.t("household")],...this._persons().map(t=>[t.id,t.name])])}
        ${this._select(this.t("type"),"_type",[["",this.t("any")],...xt.map(t=>[t,this.t(`type_${t}`)])])}
        ${this._select(this.t("status"),"_status",["active","expiring","archived","superseded","any"].map(t=>[t,this.t(t)]))}
        ${this._select(this.t("origin"),"_origin",[["",this.t("any")],...Wt.map(t=>[t,this.t(`origin_${t}`)])])}
        <label>
          <span>${this.t("tag")}</span>
          <input
            .value=${this._tag}
            @change=${t=>this._chose("_tag",t)}
            aria-label=${this.t("tag")}
            placeholder=${this.t("tagHint")}
          />
        </label>
        <label>
          <span>${this.t("from")}</span>
          <input type="date" .value=${this._since} @change=${t=>this._chose("_since",t)} aria-label=${this.t("from")} />
        </label>
        <label>
          <span>${this.t("to")}</span>
          <input type="date" .value=${this._until} @change=${t=>this._chose("_until",t)} aria-label=${this.t("to")} />
        </label>
        <label>
          <span>${this.t("order")}</span>
          <select
            @change=${t=>this._chose("_order",t)}
            aria-label=${this.t("order")}
            ?disabled=${!!this._query.trim()}
          >
            ${["newest","recalled"].map(t=>n`<option value=${t} ?selected=${t===this._order}>${this.t(t)}</option>`)}
          </select>
        </label>
      </div>`}_activeFilters(){return[this._person,this._type,this._origin,this._tag.trim(),this._since,this._until].filter(Boolean).length+(this._status==="active"?0:1)}_memoryList(){let t=this._selected.size;return n`
      ${t?n`<div class="bulk" role="toolbar" aria-label=${this.t("selected",{count:t})}>
            <span>${this.t("selected",{count:t})}</span>
            <button class="more" @click=${()=>this._actOnSelected("memory/forget")}>${this.t("forget")}</button>
            <button class="more" @click=${()=>this._actOnSelected("memory/restore")}>${this.t("restore")}</button>
            <button class="more danger" @click=${()=>this._actOnSelected("memory/forget",!0)}>
              ${this.t("purge")}
            </button>
            <button class="link" @click=${()=>this._selected=new Set}>${this.t("clearSelection")}</button>
          </div>`:l}
      <p class="count" aria-live="polite">
        ${this._loading&&!this._memories.length?this.t("loading"):this._memories.length?this.t("shown",{shown:this._memories.length,total:this._total}):this.t("none")}
      </p>
      <ul class="list">
        ${this._memories.map(e=>this._row(e))}
      </ul>
      ${this._cursor?n`<button class="more" @click=${()=>this._load(!0)}>${this.t("more")}</button>`:l}
    `}_row(t){return n`<li class="row">
      <input
        type="checkbox"
        .checked=${this._selected.has(t.id)}
        @change=${e=>this._toggle(t.id,e)}
        aria-label=${this.t("select",{id:t.id})}
      />
      <button
        class="memory ${t.status}"
        @click=${()=>this._show(t.id)}
        aria-label=${`#${t.id}: ${t.content}`}
      >
        <span class="content">${t.content}</span>
        <span class="meta">
          <span class="chip ${t.household?"house":"person"}">${t.owner}</span>
          <span>${this.t(`type_${t.type}`)}</span>
          <span>${this._date(t.created_at)}</span>
          ${t.tags.map(e=>n`<span class="chip">#${e}</span>`)}
          ${t.status!=="active"?n`<span class="chip">${this.t(t.status)}</span>`:l}
        </span>
      </button>
    </li>`}_detail({memory:t,superseded:e,superseded_by:s,has_conversation:i}){let r=(a,c)=>n`<dt>${a}</dt><dd>${c}</dd>`;return n`<section class="detail" role="dialog" aria-modal="false" aria-label=${`#${t.id}`}>
      <header>
        <h2>#${t.id}</h2>
        <button
          @click=${()=>{this._open=null,this._editing=null}}
          aria-label=${this.t("close")}
        >
          ✕
        </button>
      </header>
      ${this._editing?.id===t.id?this._editor():n`<p class="full">${t.content}</p>`}
      <dl>
        ${r(this.t("owner"),t.owner)}
        ${r(this.t("type"),this.t(`type_${t.type}`))}
        ${r(this.t("status"),this.t(t.status))}
        ${r(this.t("tags"),t.tags.join(", ")||"\u2013")}
        ${r(this.t("created"),this._date(t.created_at))}
        ${r(this.t("updated"),this._date(t.updated_at))}
        ${t.expires_at?r(this.t("expires"),this._date(t.expires_at)):l}
        ${r(this.t("recalledTimes"),t.recall_count)}
        ${r(this.t("lastRecalled"),this._date(t.last_recalled_at))}
        ${r(this.t("origin"),i?n`<button class="link" @click=${()=>this._openConversation(t.id)}>
                ${this.t(`origin_${t.source.origin}`)} · ${this.t("openConversation")}
              </button>`:this.t(`origin_${t.source.origin}`))}
      </dl>
      ${e.length?this._chain(this.t("replaced"),e):l}
      ${s.length?this._chain(this.t("replacedBy"),s):l}
      <div class="actions">
        ${t.status==="active"&&this._editing?.id!==t.id?n`<button @click=${()=>this._edit(t)}>${this.t("edit")}</button>`:l}
        ${t.status==="active"?n`<button @click=${()=>this._act("memory/forget",t.id)}>${this.t("forget")}</button>`:l}
        ${t.status==="archived"?n`<button @click=${()=>this._act("memory/restore",t.id)}>${this.t("restore")}</button>`:l}
        <button class="danger" @click=${()=>this._act("memory/forget",t.id,!0)}>
          ${this.t("purge")}
        </button>
      </div>
    </section>`}_chain(t,e){return n`<h3>${t}</h3>
      <ol class="chain">
        ${e.map(s=>n`<li><button class="link" @click=${()=>this._show(s.id)}>
              #${s.id} ${s.content}
            </button></li>`)}
      </ol>`}};w(M,"properties",{hass:{attribute:!1},narrow:{type:Boolean},panel:{attribute:!1},_memories:{state:!0},_total:{state:!0},_cursor:{state:!0},_query:{state:!0},_person:{state:!0},_status:{state:!0},_order:{state:!0},_open:{state:!0},_loading:{state:!0},_error:{state:!0},_editing:{state:!0},_overview:{state:!0},_view:{state:!0},_type:{state:!0},_tag:{state:!0},_origin:{state:!0},_since:{state:!0},_until:{state:!0},_selected:{state:!0},_filtersOpen:{state:!0}}),w(M,"styles",j);customElements.get("memory-panel")||customElements.define("memory-panel",M);export{M as MemoryPanel};
/*! Bundled license information:

@lit/reactive-element/css-tag.js:
  (**
   * @license
   * Copyright 2019 Google LLC
   * SPDX-License-Identifier: BSD-3-Clause
   *)

@lit/reactive-element/reactive-element.js:
lit-html/lit-html.js:
lit-element/lit-element.js:
  (**
   * @license
   * Copyright 2017 Google LLC
   * SPDX-License-Identifier: BSD-3-Clause
   *)

lit-html/is-server.js:
  (**
   * @license
   * Copyright 2022 Google LLC
   * SPDX-License-Identifier: BSD-3-Clause
   *)
*/
